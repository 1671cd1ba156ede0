/** JSON answers as bytes: serialized as Fastify serializes them, encoded in one pass. */

const encoder = new TextEncoder();

/** Largest scratch kept between answers (bytes); a larger answer is encoded on its own. */
const MAX_SCRATCH = 8 * 1024 * 1024;

let scratch = new Uint8Array(0);

/**
 * The UTF-8 bytes of `JSON.stringify(value)` (Fastify's default serializer), the same
 * bytes as `Buffer.from(json)`. Encoding into a reused scratch buffer and copying out the
 * used part costs half of `Buffer.from`, which measures the string before encoding it.
 *
 * @example jsonBytes({ a: "é" }).toString("utf8") // '{"a":"é"}'
 */
export function jsonBytes(value: unknown): Buffer {
  const json = JSON.stringify(value);
  // A UTF-16 code unit never takes more than 3 bytes of UTF-8.
  const bound = json.length * 3;
  if (bound > MAX_SCRATCH) return Buffer.from(json, "utf8");
  if (scratch.length < bound) scratch = new Uint8Array(Math.max(bound, 64 * 1024));
  const { read, written } = encoder.encodeInto(json, scratch);
  if (read !== json.length) return Buffer.from(json, "utf8");
  return Buffer.from(scratch.subarray(0, written));
}
