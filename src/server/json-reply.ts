/**
 * JSON answers as bytes: the bytes of `JSON.stringify` (Fastify's default serializer), with
 * the JSON of data the service hands out again and again encoded once.
 */

const encoder = new TextEncoder();

/** Largest scratch kept between answers (bytes); a larger answer is encoded on its own. */
const MAX_SCRATCH = 8 * 1024 * 1024;

/** A character `JSON.stringify` escapes (or may: a surrogate, when it is alone). */
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/** Texts this long are compared with the last one escaped before they are escaped. */
const LONG_TEXT = 256;

/** Thrown inside the walk when a value needs `JSON.stringify`'s own handling. */
const AS_A_WHOLE = Symbol("as a whole");

/**
 * `JSON.stringify(v)` for a primitive, without the call where the answer is plain: the
 * builtin costs ~0.2 µs a call here, which would be most of the walk's time.
 */
function primitiveJson(v: unknown): string | undefined {
  switch (typeof v) {
    case "string":
      return ESCAPED.test(v) ? JSON.stringify(v) : `"${v}"`;
    case "number":
      return Number.isFinite(v) ? String(v) : "null";
    case "boolean":
      return v ? "true" : "false";
    default:
      return JSON.stringify(v);
  }
}

// What JSON.stringify leaves out of an object (and writes as null in an array).
function omitted(v: unknown): boolean {
  return v === undefined || typeof v === "function" || typeof v === "symbol";
}

// Whether `v` and everything under it is frozen plain data (see AnswerEncoder). A frozen
// object's own properties and prototype cannot change; only what is under it can still be
// unfrozen, so a negative answer is worked out again next time.
function frozenPlain(v: object): boolean {
  if (!Object.isFrozen(v)) return false;
  const proto = Object.getPrototypeOf(v);
  if (Array.isArray(v)) {
    if (proto !== Array.prototype) return false;
  } else if (proto !== Object.prototype && proto !== null) {
    return false;
  }
  // Data properties only: a getter could answer differently next time.
  const props = Object.getOwnPropertyDescriptors(v);
  for (const key in props) {
    const p = props[key] as PropertyDescriptor;
    if (!("value" in p)) return false;
    const x: unknown = p.value;
    if (typeof x === "object" && x !== null && !frozenPlain(x)) return false;
    if (key === "toJSON" && typeof x === "function") return false;
  }
  return true;
}

/**
 * An answer's JSON as it is written: text, and the bytes of parts encoded before, in order.
 * Consecutive text is joined; {@link Pieces.size} bounds the UTF-8 length.
 */
class Pieces {
  readonly list: Array<string | Uint8Array> = [];
  text = "";
  /** Upper bound of the UTF-8 bytes (a UTF-16 code unit takes at most 3). */
  size = 0;

  add(json: string): void {
    this.text += json;
    this.size += json.length * 3;
  }

  addBytes(bytes: Uint8Array): void {
    if (this.text !== "") this.list.push(this.text);
    this.text = "";
    this.list.push(bytes);
    this.size += bytes.length;
  }

  done(): Array<string | Uint8Array> {
    if (this.text !== "") this.list.push(this.text);
    this.text = "";
    return this.list;
  }
}

/**
 * The encoder behind {@link createJsonEncoder}. A warm service answers with many of the
 * same objects from one request to the next (a kept layer's manifest entry, the plan),
 * frozen where they are kept; their JSON is encoded to UTF-8 when a later answer meets
 * one again, and copied into every answer after. An object's bytes are remembered only
 * when it and everything under it is frozen plain data — arrays and objects whose
 * prototype is `Array.prototype`, `Object.prototype` or null, with data properties only
 * and no `toJSON` — so what is remembered can never differ from what `JSON.stringify`
 * would write now. Other arrays
 * and plain objects are walked; anything else on the way (a `toJSON` method — its key
 * argument would differ —, a boxed primitive, a class instance, a cycle) sends the whole
 * value through `JSON.stringify`.
 */
class AnswerEncoder {
  readonly #bytes = new WeakMap<object, Uint8Array>();
  /** The answer (by number) that first met a frozen object not kept yet. */
  readonly #seenIn = new WeakMap<object, number>();
  #answer = 0;
  /** The last long escaped text and its bytes: an answer holds its prompt twice. */
  #lastText = "";
  #lastBytes: Uint8Array = new Uint8Array(0);
  #scratch = new Uint8Array(0);

  encode(value: unknown): Buffer {
    this.#answer++;
    let pieces: Array<string | Uint8Array>;
    let size: number;
    try {
      const out = new Pieces();
      if (omitted(value)) throw AS_A_WHOLE;
      this.#value(value, out);
      pieces = out.done();
      size = out.size;
    } catch (err) {
      // JSON.stringify's own answer or error (a cycle overflows the walk's stack).
      if (err !== AS_A_WHOLE && !(err instanceof RangeError)) throw err;
      const json = JSON.stringify(value) as string | undefined;
      if (json === undefined) {
        throw new TypeError("not a JSON value (undefined, a function or a symbol)");
      }
      pieces = [json];
      size = json.length * 3;
    }
    return this.#join(pieces, size);
  }

  // The pieces' UTF-8 bytes in one new buffer (through the scratch, reused across answers).
  #join(pieces: ReadonlyArray<string | Uint8Array>, size: number): Buffer {
    if (size > MAX_SCRATCH) {
      return Buffer.concat(pieces.map((p) => (typeof p === "string" ? Buffer.from(p, "utf8") : p)));
    }
    if (this.#scratch.length < size) this.#scratch = new Uint8Array(Math.max(size, 64 * 1024));
    const scratch = this.#scratch;
    let at = 0;
    for (const p of pieces) {
      if (typeof p === "string") {
        const { read, written } = encoder.encodeInto(p, scratch.subarray(at));
        if (read !== p.length) throw new Error("scratch buffer too small for an answer");
        at += written;
      } else {
        scratch.set(p, at);
        at += p.length;
      }
    }
    return Buffer.from(scratch.subarray(0, at));
  }

  // Writes the JSON of `v` (never one JSON.stringify leaves out: callers check `omitted`).
  #value(v: unknown, out: Pieces): void {
    if (typeof v === "string" && v.length >= LONG_TEXT && ESCAPED.test(v)) {
      if (v !== this.#lastText) {
        this.#lastBytes = encoder.encode(JSON.stringify(v));
        this.#lastText = v;
      }
      out.addBytes(this.#lastBytes);
      return;
    }
    if (typeof v !== "object" || v === null) {
      out.add(primitiveJson(v) as string);
      return;
    }
    const frozen = Object.isFrozen(v);
    if (frozen) {
      const known = this.#bytes.get(v);
      if (known !== undefined) {
        out.addBytes(known);
        return;
      }
    }
    // Boxed primitives, dates, class instances: JSON.stringify has rules of its own.
    if (!Array.isArray(v)) {
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) throw AS_A_WHOLE;
    }
    if (typeof (v as { toJSON?: unknown }).toJSON === "function") throw AS_A_WHOLE;
    if (frozen) this.#frozen(v, out);
    else if (Array.isArray(v)) this.#array(v, out);
    else this.#object(v as Record<string, unknown>, out);
  }

  // A frozen object's bytes are kept when a later answer meets it again: most frozen
  // objects of an answer that changed belong to that answer alone (some twice in it), and
  // checking them would cost more than writing them.
  #frozen(v: object, out: Pieces): void {
    const json = JSON.stringify(v);
    const seen = this.#seenIn.get(v);
    if (seen === undefined || seen === this.#answer) {
      if (seen === undefined) this.#seenIn.set(v, this.#answer);
      out.add(json);
      return;
    }
    if (!frozenPlain(v)) {
      out.add(json);
      return;
    }
    const bytes = encoder.encode(json);
    this.#bytes.set(v, bytes);
    out.addBytes(bytes);
  }

  #array(v: readonly unknown[], out: Pieces): void {
    out.add("[");
    for (let i = 0; i < v.length; i++) {
      if (i > 0) out.add(",");
      const x = v[i];
      if (omitted(x)) out.add("null");
      else this.#value(x, out);
    }
    out.add("]");
  }

  #object(v: Record<string, unknown>, out: Pieces): void {
    out.add("{");
    let first = true;
    for (const key of Object.keys(v)) {
      const x = v[key];
      if (omitted(x)) continue;
      out.add(`${first ? "" : ","}${primitiveJson(key)}:`);
      first = false;
      this.#value(x, out);
    }
    out.add("}");
  }
}

/**
 * A JSON encoder with its own scratch buffer and memo (one per route, reused across its
 * answers): `encode(value)` gives the UTF-8 bytes of `JSON.stringify(value)` — the same
 * bytes as `Buffer.from(JSON.stringify(value))` — and throws what `JSON.stringify` throws
 * (a `TypeError` for a cycle or a BigInt, and for a value it would not serialize at all).
 * Deeply frozen plain data met before is copied as the bytes written then (see
 * AnswerEncoder); text is encoded into the scratch and the used part copied out, half the
 * cost of `Buffer.from`, which measures the string first.
 *
 * @example createJsonEncoder().encode({ a: "é" }).toString("utf8") // '{"a":"é"}'
 */
export function createJsonEncoder(): { encode(value: unknown): Buffer } {
  const answers = new AnswerEncoder();
  return { encode: (value) => answers.encode(value) };
}

/** Levels of an answer {@link createPieceEncoder} walks before it stringifies what is below. */
const PIECE_DEPTH = 4;

/** A plain array or object (JSON.stringify's own rules apply to anything else). */
function walkable(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  const plain = Array.isArray(v)
    ? proto === Array.prototype
    : proto === Object.prototype || proto === null;
  return plain && typeof (v as { toJSON?: unknown }).toJSON !== "function";
}

/**
 * The writer behind {@link createPieceEncoder}: the answer's top levels walked, each value
 * below them stringified on its own and written into the scratch as UTF-8.
 */
class PieceWriter {
  #scratch = Buffer.allocUnsafe(64 * 1024);
  #at = 0;

  encode(value: unknown): Buffer {
    if (typeof value !== "object" || value === null || !walkable(value)) return wholeJson(value);
    this.#at = 0;
    try {
      this.#value(value, PIECE_DEPTH);
    } catch (err) {
      if (err !== AS_A_WHOLE) throw err;
      return wholeJson(value);
    }
    return Buffer.from(this.#scratch.subarray(0, this.#at));
  }

  #write(json: string): void {
    const need = this.#at + json.length * 3;
    if (need > this.#scratch.length) {
      if (need > MAX_SCRATCH) throw AS_A_WHOLE;
      const grown = Buffer.allocUnsafe(
        Math.min(MAX_SCRATCH, Math.max(need, 2 * this.#scratch.length)),
      );
      this.#scratch.copy(grown, 0, 0, this.#at);
      this.#scratch = grown;
    }
    this.#at += this.#scratch.write(json, this.#at, "utf8");
  }

  // Writes the JSON of `v` (never one JSON.stringify leaves out: callers check `omitted`).
  #value(v: unknown, depth: number): void {
    if (typeof v !== "object" || v === null) {
      this.#write(primitiveJson(v) as string);
      return;
    }
    if (!walkable(v)) throw AS_A_WHOLE;
    if (depth === 0) {
      this.#write(JSON.stringify(v));
      return;
    }
    if (Array.isArray(v)) {
      this.#write("[");
      for (let i = 0; i < v.length; i++) {
        if (i > 0) this.#write(",");
        const x: unknown = v[i];
        if (omitted(x)) this.#write("null");
        else this.#value(x, depth - 1);
      }
      this.#write("]");
      return;
    }
    this.#write("{");
    let first = true;
    for (const key of Object.keys(v)) {
      const x = (v as Record<string, unknown>)[key];
      if (omitted(x)) continue;
      this.#write(`${first ? "" : ","}${primitiveJson(key)}:`);
      first = false;
      this.#value(x, depth - 1);
    }
    this.#write("}");
  }
}

// JSON.stringify's bytes of a whole value, or its error.
function wholeJson(value: unknown): Buffer {
  const json = JSON.stringify(value) as string | undefined;
  if (json === undefined) {
    throw new TypeError("not a JSON value (undefined, a function or a symbol)");
  }
  return Buffer.from(json, "utf8");
}

/**
 * A JSON encoder for large answers made afresh each time (one per route, reused across
 * its answers): `encode(value)` gives the bytes of `Buffer.from(JSON.stringify(value))`
 * and throws what `JSON.stringify` throws. `JSON.stringify` of a large value returns its
 * text in chunks; encoding that text flattens it first into one new string, twice the
 * answer's size when a character is above U+00FF — on `POST /v1/request` at 1,000 messages
 * (0.8 MB) that copy and the encoding cost about three times the `JSON.stringify`. Here
 * the top levels of plain arrays and objects are walked and each value below them
 * stringified and written as UTF-8 into a scratch buffer kept between answers, then
 * copied out; anything else on the way (a `toJSON` method, a class instance) sends the
 * whole value through `JSON.stringify`.
 *
 * @example createPieceEncoder().encode({ a: ["é"] }).toString("utf8") // '{"a":["é"]}'
 */
export function createPieceEncoder(): { encode(value: unknown): Buffer } {
  const writer = new PieceWriter();
  return { encode: (value) => writer.encode(value) };
}
