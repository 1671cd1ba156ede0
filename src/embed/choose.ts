/**
 * Choosing the embedder: `--embedder`, else the workspace config's `memory.embedder`, else
 * the `PROMPTCTX_EMBEDDER` environment variable, else the embedded default. The values:
 *
 * - `embedded` (alias `use-lite`): Universal Sentence Encoder lite, offline (use-lite/);
 * - `openai:MODEL` or `openai:MODEL:DIMENSIONS`: an OpenAI-compatible `/v1/embeddings`
 *   (openai.ts); base URL and key from `PROMPTCTX_EMBEDDER_BASE_URL` /
 *   `PROMPTCTX_EMBEDDER_API_KEY`, else `OPENAI_BASE_URL` / `OPENAI_API_KEY`;
 * - `PROMPTCTX_EMBEDDER_THREADS` (`0` or `1`): threads besides the calling one that run the
 *   embedded encoder's kernels (default 1 on a machine with 2 or more cores; `memory
 *   recall`, which embeds one text, passes 0 when the variable is unset);
 * - `none`: no recall by meaning (full-text only).
 *
 * The environment is a parameter (never read here), so a choice is reproducible.
 */
import { InvalidInputError } from "../errors/index.js";
import { KNOWN_DIMENSIONS } from "./openai.js";
import type { Embedder, EmbedderSpec } from "./types.js";

const MAX_DIMENSIONS = 8192;

/**
 * Parses an embedder value (see the module comment); `path` names where it came from.
 *
 * @example parseEmbedderSpec("openai:nomic-embed-text:768", "--embedder")
 * // { kind: "openai", model: "nomic-embed-text", dimensions: 768 }
 */
export function parseEmbedderSpec(value: string, path: string): EmbedderSpec {
  const v = value.trim();
  if (v === "none") return { kind: "none" };
  if (v === "embedded" || v === "use-lite") return { kind: "embedded" };
  const m = /^openai:([^\s:][^\s]*?)(?::(\d+))?$/.exec(v);
  if (m !== null) {
    const model = m[1]!;
    if (m[2] === undefined) return { kind: "openai", model };
    const dimensions = Number(m[2]);
    if (!Number.isSafeInteger(dimensions) || dimensions < 1 || dimensions > MAX_DIMENSIONS) {
      throw new InvalidInputError(
        `${path}: dimensions must be an integer in 1..${MAX_DIMENSIONS}, got ${m[2]}`,
        path,
      );
    }
    return { kind: "openai", model, dimensions };
  }
  throw new InvalidInputError(
    `${path}: unknown embedder ${JSON.stringify(value)}; expected embedded, none, openai:MODEL or openai:MODEL:DIMENSIONS`,
    path,
  );
}

/** Where the embedder may be chosen, strongest first. */
export interface EmbedderChoice {
  /** `--embedder`. */
  flag?: string | undefined;
  /** The workspace config's `memory.embedder`. */
  config?: string | undefined;
  /** The process environment (`PROMPTCTX_EMBEDDER`, base URL, key). */
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * The spec chosen by flag, config, environment, or the embedded default.
 *
 * @example chooseEmbedderSpec({ flag: "none" }) // { kind: "none" }
 */
export function chooseEmbedderSpec(choice: EmbedderChoice): EmbedderSpec {
  if (choice.flag !== undefined) return parseEmbedderSpec(choice.flag, "--embedder");
  if (choice.config !== undefined) return parseEmbedderSpec(choice.config, "memory.embedder");
  const env = choice.env?.PROMPTCTX_EMBEDDER;
  if (env !== undefined && env.trim() !== "") return parseEmbedderSpec(env, "PROMPTCTX_EMBEDDER");
  return { kind: "embedded" };
}

/**
 * The embedder of `spec` (`null` for `none`), loaded now: the embedded model is read
 * from the installed package, the `openai` client imported.
 *
 * @example const e = await createEmbedder({ kind: "openai", model: "text-embedding-3-small" }, env);
 */
export async function createEmbedder(
  spec: EmbedderSpec,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<Embedder | null> {
  if (spec.kind === "none") return null;
  if (spec.kind === "embedded") {
    const { loadUseLite } = await import("./use-lite/index.js");
    const threads = env.PROMPTCTX_EMBEDDER_THREADS;
    if (threads === undefined || threads === "") return loadUseLite();
    if (threads !== "0" && threads !== "1") {
      throw new InvalidInputError(
        `PROMPTCTX_EMBEDDER_THREADS: expected 0 or 1 (extra threads of the embedded encoder), got ${JSON.stringify(threads)}`,
        "PROMPTCTX_EMBEDDER_THREADS",
      );
    }
    return loadUseLite({ threads: Number(threads) });
  }
  const dimensions = spec.dimensions ?? KNOWN_DIMENSIONS[spec.model];
  if (dimensions === undefined) {
    throw new InvalidInputError(
      `embedder openai:${spec.model}: its dimensions are not known; give them as openai:${spec.model}:DIMENSIONS`,
      "embedder",
    );
  }
  const { openAiEmbedder } = await import("./openai.js");
  const baseURL = env.PROMPTCTX_EMBEDDER_BASE_URL ?? env.OPENAI_BASE_URL;
  const apiKey = env.PROMPTCTX_EMBEDDER_API_KEY ?? env.OPENAI_API_KEY;
  return openAiEmbedder({
    model: spec.model,
    dimensions,
    // Only models that can shorten their vectors take `dimensions` (others reject it).
    sendDimensions: spec.dimensions !== undefined && spec.model.startsWith("text-embedding-3"),
    ...(baseURL !== undefined && baseURL !== "" ? { baseURL } : {}),
    ...(apiKey !== undefined && apiKey !== "" ? { apiKey } : {}),
  });
}
