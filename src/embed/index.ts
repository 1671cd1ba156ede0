/**
 * Embedders: sentence encoders that turn memories and queries into vectors for recall by
 * meaning (docs/sources.md "recall by meaning"). A stage below the store, as tokens/ is for
 * counting: the store records the embedder's id and keeps its vectors. The embedded
 * default (use-lite/) and the remote client (openai.ts) are loaded only when created.
 * Imports only errors/.
 */
export { chunked } from "./batch.js";
export {
  chooseEmbedderSpec,
  createEmbedder,
  type EmbedderChoice,
  parseEmbedderSpec,
} from "./choose.js";
export { EmbedderDimensionsError, EmbedderMismatchError, EmbedderRequestError } from "./errors.js";
export { KNOWN_DIMENSIONS, type OpenAiEmbedderOptions, openAiEmbedderId } from "./openai.js";
export {
  normalizeForPieces,
  RESERVED_PIECES,
  type UnigramTokenizer,
  unigramTokenizer,
  type VocabEntry,
} from "./tokenizer.js";
export type { Embedder, EmbedderSpec } from "./types.js";
export { cosine, isFiniteVector, unitVector } from "./vector.js";
