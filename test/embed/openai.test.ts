import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  chooseEmbedderSpec,
  cosine,
  createEmbedder,
  EmbedderDimensionsError,
  EmbedderRequestError,
  parseEmbedderSpec,
} from "../../src/embed/index.js";

/** A loopback `/v1/embeddings` speaking the OpenAI wire format; `dims` per model name. */
interface Seen {
  auth: string | undefined;
  bodies: { model: string; input: string[]; dimensions?: number; encoding_format?: string }[];
}
let server: Server;
let base: string;
const seen: Seen = { auth: undefined, bodies: [] };

function fakeVector(text: string, dims: number): number[] {
  const v = new Array(dims).fill(0);
  for (const ch of text) v[ch.codePointAt(0)! % dims] += 1;
  return v;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      seen.auth = req.headers.authorization;
      if (req.url !== "/v1/embeddings" || req.method !== "POST") {
        res.writeHead(404).end();
        return;
      }
      const b = JSON.parse(body) as Seen["bodies"][number];
      seen.bodies.push(b);
      if (b.model === "broken") {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "model crashed", type: "server_error" } }));
        return;
      }
      const dims = b.model === "short" ? 3 : (b.dimensions ?? 8);
      const data = b.input.map((t, index) => ({
        object: "embedding",
        index,
        embedding: fakeVector(t, dims),
      }));
      // Out of order on purpose: the client must place vectors by `index`.
      data.reverse();
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          object: "list",
          data,
          model: b.model,
          usage: { prompt_tokens: 1, total_tokens: 1 },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe("OpenAI-compatible /v1/embeddings embedder (official client, loopback server)", () => {
  it("embeds in batches, places vectors by index, sends the key and returns unit vectors", async () => {
    seen.bodies.length = 0;
    const e = (await createEmbedder(parseEmbedderSpec("openai:fake:8", "--embedder"), {
      OPENAI_BASE_URL: base,
      OPENAI_API_KEY: "sk-test",
    }))!;
    expect(e.id).toBe("openai:fake/8");
    expect(e.dimensions).toBe(8);
    const texts = Array.from({ length: 200 }, (_, i) => `text ${i}`);
    const out = await e.embed(texts);
    expect(out).toHaveLength(200);
    expect(seen.bodies.map((b) => b.input.length)).toEqual([96, 96, 8]);
    expect(seen.auth).toBe("Bearer sk-test");
    expect(seen.bodies[0]!.encoding_format).toBe("float");
    const again = await e.embed(["text 150"]);
    expect(cosine(again[0]!, out[150]!)).toBeCloseTo(1, 5);
    expect(cosine(out[0]!, out[0]!)).toBeCloseTo(1, 5);
  });

  it("asks text-embedding-3 models for their configured dimensions; the embedder's own env wins", async () => {
    seen.bodies.length = 0;
    const e = (await createEmbedder(parseEmbedderSpec("openai:text-embedding-3-small:16", "x"), {
      PROMPTCTX_EMBEDDER_BASE_URL: base,
      OPENAI_BASE_URL: "http://127.0.0.1:1/v1",
    }))!;
    const [v] = await e.embed(["hello"]);
    expect(v).toHaveLength(16);
    expect(seen.bodies[0]!.dimensions).toBe(16);
  });

  it("refuses vectors of the wrong dimensions with embedder_dimensions", async () => {
    const e = (await createEmbedder(parseEmbedderSpec("openai:short:8", "x"), {
      OPENAI_BASE_URL: base,
    }))!;
    const err = await e.embed(["hello"]).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(EmbedderDimensionsError);
    expect((err as EmbedderDimensionsError).code).toBe("embedder_dimensions");
    expect((err as Error).message).toContain("3 dimensions; configured: 8");
  });

  it("reports an unreachable server as connection_refused naming the URL", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const url = `http://127.0.0.1:${port}/v1`;
    const e = (await createEmbedder(parseEmbedderSpec("openai:fake:8", "x"), {
      OPENAI_BASE_URL: url,
    }))!;
    const err = (await e.embed(["hello"]).catch((x: unknown) => x)) as EmbedderRequestError;
    expect(err).toBeInstanceOf(EmbedderRequestError);
    expect(err.code).toBe("connection_refused");
    expect(err.message).toContain(`${url}/embeddings`);
  });

  it("reports a server error as embedder_failed with the status", async () => {
    const e = (await createEmbedder(parseEmbedderSpec("openai:broken:8", "x"), {
      OPENAI_BASE_URL: base,
    }))!;
    const err = (await e.embed(["hello"]).catch((x: unknown) => x)) as EmbedderRequestError;
    expect(err.code).toBe("embedder_failed");
    expect(err.message).toContain("HTTP 500");
  });
});

describe("choosing the embedder", () => {
  it("flag over config over environment over the embedded default", () => {
    const env = { PROMPTCTX_EMBEDDER: "openai:m:4" };
    expect(chooseEmbedderSpec({ flag: "none", config: "embedded", env })).toEqual({ kind: "none" });
    expect(chooseEmbedderSpec({ config: "use-lite", env })).toEqual({ kind: "embedded" });
    expect(chooseEmbedderSpec({ env })).toEqual({ kind: "openai", model: "m", dimensions: 4 });
    expect(chooseEmbedderSpec({})).toEqual({ kind: "embedded" });
  });

  it("refuses an unknown value or dimensions with the field path", () => {
    expect(() => parseEmbedderSpec("bert", "--embedder")).toThrow(/unknown embedder "bert"/);
    try {
      parseEmbedderSpec("openai:m:0", "memory.embedder");
    } catch (err) {
      expect((err as { code: string; path: string }).path).toBe("memory.embedder");
    }
    expect(() => parseEmbedderSpec("openai:m:0", "memory.embedder")).toThrow(/1\.\.8192/);
  });

  it("needs the dimensions of a model it does not know", async () => {
    await expect(createEmbedder({ kind: "openai", model: "nomic-embed-text" })).rejects.toThrow(
      /openai:nomic-embed-text:DIMENSIONS/,
    );
  });
});
