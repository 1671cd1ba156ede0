/**
 * The embedder contract: what the store asks of a sentence encoder. Vectors of one
 * embedder are comparable with each other only, so {@link Embedder.id} names the vector
 * space (model, version, dimensions) and the store records it.
 */

/**
 * A sentence encoder. `embed` is batched: one call embeds many texts, the result in the
 * same order, each a vector of `dimensions` floats (unit length: the store compares by
 * cosine as a dot product).
 *
 * @example
 * const [v] = await embedder.embed(["The user prefers a dark theme"]);
 * v.length === embedder.dimensions; // true
 */
export interface Embedder {
  /** The vector space: `model@version/dimensions`, e.g. `use-lite@1/512`. */
  readonly id: string;
  readonly dimensions: number;
  /** Texts embedded per request (the caller may pass more; the embedder splits them). */
  readonly batchSize: number;
  /**
   * Whether a text in this language can be embedded meaningfully: an encoder that never
   * saw a script returns vectors that match everything a little, so such a text is left
   * to full-text recall. Default: every text.
   */
  covers?(text: string): boolean;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  /** Frees what the embedder holds (a model, a connection pool). */
  close?(): Promise<void>;
}

/** How an embedder is chosen (`--embedder`, `memory.embedder` in the workspace config, `PROMPTCTX_EMBEDDER`). */
export type EmbedderSpec =
  | { kind: "none" }
  | { kind: "embedded" }
  | { kind: "openai"; model: string; dimensions?: number };
