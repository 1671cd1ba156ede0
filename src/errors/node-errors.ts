/** Reads the `code` of Node system errors (`ENOENT`, `EACCES`, …) one way for every stage. */

/**
 * The string `code` of a thrown Node system error (`ENOENT`, `EACCES`, …), or `fallback`
 * (default `undefined`) when the value is not an object or carries no string `code`. Sites
 * that show the code pass the placeholder they print for an unknown one (e.g. `"error"`).
 *
 * @example
 * nodeErrorCode(Object.assign(new Error("x"), { code: "ENOENT" })) // "ENOENT"
 * nodeErrorCode(new Error("x"), "error") // "error"
 */
export function nodeErrorCode(err: unknown): string | undefined;
export function nodeErrorCode(err: unknown, fallback: string): string;
export function nodeErrorCode(err: unknown, fallback?: string): string | undefined {
  if (typeof err === "object" && err !== null) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === "string") return code;
  }
  return fallback;
}

// Socket-level failures: the provider was never reached (nothing it said to report).
const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

/**
 * Why a remote service (a model provider, an embedder) could not be reached: the network code found along the error's causes,
 * else `connection error` for the SDKs' own connection failure; `null` when it was reached.
 */
export function unreachableCode(err: unknown): string | null {
  let e: unknown = err;
  for (let depth = 0; depth < 6 && typeof e === "object" && e !== null; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && UNREACHABLE.has(code)) return code;
    e = (e as { cause?: unknown }).cause;
  }
  const name = typeof err === "object" && err !== null ? err.constructor.name : "";
  return name.startsWith("APIConnection") ? "connection error" : null;
}
