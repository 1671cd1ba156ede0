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
