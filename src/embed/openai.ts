/**
 * A remote embedder over the OpenAI-compatible `POST /v1/embeddings` wire format, with the
 * official `openai` client: OpenAI itself, and the same route served by Ollama, vLLM or
 * LM Studio (point `baseURL` at them). The client is imported when the embedder is made:
 * verbs that never embed do not load it.
 *
 * Every answer is checked: one vector per text, each of the configured dimensions
 * ({@link EmbedderDimensionsError} otherwise); an unreachable server is
 * `connection_refused` naming the URL, any other failure `embedder_failed`.
 */
import { unreachableCode } from "../errors/index.js";
import { chunked } from "./batch.js";
import { EmbedderDimensionsError, EmbedderRequestError } from "./errors.js";
import type { Embedder } from "./types.js";
import { isFiniteVector, unitVector } from "./vector.js";

/** Options of {@link openAiEmbedder}. */
export interface OpenAiEmbedderOptions {
  /** The embedding model, e.g. `text-embedding-3-small` or `nomic-embed-text`. */
  model: string;
  /** The vector length the server must return; asked for with `dimensions` when given. */
  dimensions: number;
  /** Whether to send `dimensions` in the request (models that can shorten, e.g. text-embedding-3-*). Default false. */
  sendDimensions?: boolean;
  /** Base URL, e.g. `http://127.0.0.1:11434/v1`. Default `https://api.openai.com/v1`. */
  baseURL?: string;
  /** The bearer key (a local server may take any). */
  apiKey?: string;
  /** Texts per request. Default 96. */
  batchSize?: number;
  /** Per-request timeout in ms. Default 30000. */
  timeoutMs?: number;
  /** Retries of a failed request (the client's backoff). Default 1. */
  maxRetries?: number;
}

/** Dimensions a known OpenAI model returns by default (others must be given). */
export const KNOWN_DIMENSIONS: Readonly<Record<string, number>> = {
  "text-embedding-3-small": 1536,
  "text-embedding-3-large": 3072,
  "text-embedding-ada-002": 1536,
};

/** The embedder id of an OpenAI-compatible model: `openai:model/dimensions`. */
export function openAiEmbedderId(model: string, dimensions: number): string {
  return `openai:${model}/${dimensions}`;
}

/** The failure of one request as a typed error. */
function requestFailure(err: unknown, url: string): EmbedderRequestError {
  const code = unreachableCode(err);
  if (code !== null) {
    return new EmbedderRequestError(
      "connection_refused",
      `cannot reach the embedder at ${url} (${code}): check that it runs, or set OPENAI_BASE_URL`,
      url,
    );
  }
  const status = (err as { status?: unknown }).status;
  const why = err instanceof Error ? err.message : String(err);
  const where = typeof status === "number" ? `HTTP ${status}` : "error";
  return new EmbedderRequestError(
    "embedder_failed",
    `the embedder at ${url} failed (${where}): ${why}`,
    url,
  );
}

/**
 * An embedder over an OpenAI-compatible `/v1/embeddings`.
 *
 * @example
 * const e = await openAiEmbedder({ model: "nomic-embed-text", dimensions: 768, baseURL: "http://127.0.0.1:11434/v1" });
 * const [v] = await e.embed(["The user prefers a dark theme"]);
 */
export async function openAiEmbedder(options: OpenAiEmbedderOptions): Promise<Embedder> {
  const { default: OpenAI } = await import("openai");
  const baseURL = (options.baseURL ?? "https://api.openai.com/v1").replace(/\/+$/, "");
  const client = new OpenAI({
    apiKey: options.apiKey ?? "none",
    baseURL,
    timeout: options.timeoutMs ?? 30_000,
    maxRetries: options.maxRetries ?? 1,
  });
  const { model, dimensions } = options;
  const batchSize = options.batchSize ?? 96;
  const url = `${baseURL}/embeddings`;
  const one = async (texts: string[]): Promise<Float32Array[]> => {
    let data: { embedding: number[] | string; index: number }[];
    try {
      const res = await client.embeddings.create({
        model,
        input: texts,
        encoding_format: "float",
        ...(options.sendDimensions ? { dimensions } : {}),
      });
      data = res.data;
    } catch (err) {
      throw requestFailure(err, url);
    }
    if (!Array.isArray(data) || data.length !== texts.length) {
      throw new EmbedderDimensionsError(
        `the embedder at ${url} returned ${Array.isArray(data) ? data.length : "no"} vectors for ${texts.length} texts`,
      );
    }
    const out: Float32Array[] = new Array(texts.length);
    for (const [k, d] of data.entries()) {
      const i = typeof d.index === "number" ? d.index : k;
      const v = d.embedding;
      if (!Array.isArray(v) || v.length !== dimensions || i < 0 || i >= texts.length) {
        throw new EmbedderDimensionsError(
          `the embedder at ${url} (model ${model}) returned a vector of ${Array.isArray(v) ? v.length : "no"} dimensions; configured: ${dimensions}`,
        );
      }
      const f = Float32Array.from(v);
      if (!isFiniteVector(f)) {
        throw new EmbedderDimensionsError(`the embedder at ${url} returned a non-finite vector`);
      }
      out[i] = unitVector(f);
    }
    return out;
  };
  return {
    id: openAiEmbedderId(model, dimensions),
    dimensions,
    batchSize,
    async embed(texts: readonly string[]): Promise<Float32Array[]> {
      const out: Float32Array[] = [];
      for (const batch of chunked(texts, batchSize)) out.push(...(await one(batch)));
      return out;
    },
  };
}
