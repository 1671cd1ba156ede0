/**
 * Embedder errors, in the one hierarchy of src/errors: a store written with another
 * embedder, a remote embedder that answers with vectors of the wrong length or with an
 * error, or cannot be reached (`connection_refused`, naming the URL).
 */
import { PromptctxError } from "../errors/index.js";

/**
 * The `--embedder` value of an embedder id: `embedded` for USE lite,
 * `openai:MODEL:DIMENSIONS` for a remote one, else the id itself.
 *
 * @example flagOf("openai:nomic-embed-text/768") // "openai:nomic-embed-text:768"
 */
export function flagOf(id: string): string {
  if (id.startsWith("use-lite@")) return "embedded";
  const m = /^openai:(.+)\/(\d+)$/.exec(id);
  return m === null ? id : `openai:${m[1]}:${m[2]}`;
}

/**
 * The store's vectors come from another embedder: mixing two vector spaces would rank by
 * noise, so opening is refused and the message names the command that migrates.
 *
 * @example new EmbedderMismatchError("a@1/512", "b@2/768").code // "embedder_mismatch"
 */
export class EmbedderMismatchError extends PromptctxError {
  readonly recorded: string;
  readonly configured: string;
  constructor(recorded: string, configured: string) {
    super(
      "embedder_mismatch",
      `the memory store's vectors are from embedder ${recorded}, but the configured embedder is ${configured}: run \`promptctx memory reembed --embedder ${flagOf(configured)}\` to migrate the store to ${configured}, or configure ${flagOf(recorded)} again (--embedder, memory.embedder, PROMPTCTX_EMBEDDER)`,
      "embedder",
    );
    this.name = "EmbedderMismatchError";
    this.recorded = recorded;
    this.configured = configured;
  }
}

/** A remote embedder returned a vector of another length than configured (or a wrong count). */
export class EmbedderDimensionsError extends PromptctxError {
  constructor(message: string) {
    super("embedder_dimensions", message, "embedder");
    this.name = "EmbedderDimensionsError";
  }
}

/** A remote embedder could not be reached or answered with an error. */
export class EmbedderRequestError extends PromptctxError {
  readonly url: string;
  constructor(code: "connection_refused" | "embedder_failed", message: string, url: string) {
    super(code, message, "embedder");
    this.name = "EmbedderRequestError";
    this.url = url;
  }
}
