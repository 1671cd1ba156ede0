/** JSON answers as bytes: serialized as Fastify serializes them, encoded in one pass. */

const encoder = new TextEncoder();

/** Largest scratch kept between answers (bytes); a larger answer is encoded on its own. */
const MAX_SCRATCH = 8 * 1024 * 1024;

/** A character `JSON.stringify` escapes (or may: a surrogate, when it is alone). */
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * `JSON.stringify(v)` for a primitive, without the call where the answer is plain: the
 * builtin costs ~0.2 µs a call here, which is most of the walk's time.
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

/** Texts this long are compared with the last one escaped before they are escaped. */
const LONG_TEXT = 256;

/** Thrown inside the walk when a value needs `JSON.stringify`'s own handling (`toJSON`). */
const AS_A_WHOLE = Symbol("as a whole");

/**
 * `JSON.stringify` that remembers the JSON of deeply frozen plain data. A warm service
 * answers with many of the same objects from one request to the next (a kept layer's
 * decisions, the plan's decision list), frozen where they are kept; their JSON is written
 * once and spliced into every later answer. An object's JSON is remembered only when it
 * and everything under it is frozen plain data — arrays and objects whose prototype is
 * `Array.prototype`, `Object.prototype` or null, without `toJSON` — so what is remembered
 * can never differ from what `JSON.stringify` would write now. Other arrays and plain
 * objects are walked; anything else on the way (a `toJSON` method — its key argument would
 * differ —, a boxed primitive, a class instance, a cycle) sends the whole value through
 * `JSON.stringify`.
 */
class FrozenJsonMemo {
  readonly #json = new WeakMap<object, string>();
  /** The last escaped text and its JSON: an answer holds its prompt twice (and so does the next). */
  #lastText = "";
  #lastJson = '""';

  stringify(value: unknown): string | undefined {
    try {
      return this.#value(value);
    } catch (err) {
      // JSON.stringify's own answer or error (a cycle overflows the walk's stack).
      if (err === AS_A_WHOLE || err instanceof RangeError) return JSON.stringify(value);
      throw err;
    }
  }

  // The JSON of `v`, or undefined where JSON.stringify leaves a property out.
  #value(v: unknown): string | undefined {
    if (typeof v === "string" && v.length >= LONG_TEXT && ESCAPED.test(v)) {
      if (v !== this.#lastText) {
        this.#lastText = v;
        this.#lastJson = JSON.stringify(v);
      }
      return this.#lastJson;
    }
    if (typeof v !== "object" || v === null) return primitiveJson(v);
    const frozen = Object.isFrozen(v);
    if (frozen) {
      const known = this.#json.get(v);
      if (known !== undefined) return known;
    }
    // Boxed primitives, dates, class instances: JSON.stringify has rules of its own.
    if (!Array.isArray(v)) {
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) throw AS_A_WHOLE;
    }
    if (typeof (v as { toJSON?: unknown }).toJSON === "function") throw AS_A_WHOLE;
    if (frozen) {
      const json = JSON.stringify(v);
      if (frozenPlain(v)) this.#json.set(v, json);
      return json;
    }
    if (Array.isArray(v)) {
      let out = "[";
      for (let i = 0; i < v.length; i++) {
        if (i > 0) out += ",";
        out += this.#value(v[i]) ?? "null";
      }
      return `${out}]`;
    }
    let out = "{";
    let first = true;
    for (const key of Object.keys(v)) {
      const json = this.#value((v as Record<string, unknown>)[key]);
      if (json === undefined) continue;
      out += `${first ? "" : ","}${primitiveJson(key)}:${json}`;
      first = false;
    }
    return `${out}}`;
  }
}

// Whether `v` and everything under it is frozen plain data (see FrozenJsonMemo). A frozen
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
 * A JSON encoder with its own scratch buffer and memo (one per route, reused across its
 * answers): `encode(value)` gives the UTF-8 bytes of `JSON.stringify(value)` (Fastify's
 * default serializer), the same bytes as `Buffer.from(json)`. Deeply frozen plain data met
 * before is not serialized again (see FrozenJsonMemo). Encoding into the scratch and
 * copying out the used part costs half of `Buffer.from`, which measures the string first.
 *
 * @example createJsonEncoder().encode({ a: "é" }).toString("utf8") // '{"a":"é"}'
 */
export function createJsonEncoder(): {
  encode(value: unknown): Buffer;
  stringify(value: unknown): string | undefined;
} {
  let scratch = new Uint8Array(0);
  const memo = new FrozenJsonMemo();
  return {
    stringify: (value) => memo.stringify(value),
    encode(value) {
      const json = memo.stringify(value);
      if (json === undefined)
        throw new TypeError("not a JSON value (undefined, a function or a symbol)");
      // A UTF-16 code unit never takes more than 3 bytes of UTF-8.
      const bound = json.length * 3;
      if (bound > MAX_SCRATCH) return Buffer.from(json, "utf8");
      if (scratch.length < bound) scratch = new Uint8Array(Math.max(bound, 64 * 1024));
      const { read, written } = encoder.encodeInto(json, scratch);
      if (read !== json.length) return Buffer.from(json, "utf8");
      return Buffer.from(scratch.subarray(0, written));
    },
  };
}
