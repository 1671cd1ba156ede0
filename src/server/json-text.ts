/**
 * A request body's JSON text as a one-byte string. Decoding UTF-8 with any character
 * above U+00FF makes V8 build a two-byte string of the whole body (2 bytes a character,
 * written into fresh memory): on the 0.93 MB body of the `request-latency` bench, with
 * some CJK text in it, `toString("utf8")` cost 2–3× the `JSON.parse` that follows it.
 * Written with `\uXXXX` escapes instead, the text is ASCII — copied, not decoded — and
 * `JSON.parse` reads the same value from it.
 */
import { isAscii } from "node:buffer";

/** Bytes checked at once for non-ASCII (`isAscii`, native) before a byte-by-byte look. */
const BLOCK = 1024;

/** Beyond this share of non-ASCII bytes the escapes outgrow a two-byte string: decode. */
const MAX_NON_ASCII_SHARE = 0.25;

const BACKSLASH = 0x5c;
const HEX = "0123456789abcdef";

/** A growable buffer owned by one caller (a parser), reused from one body to the next. */
export interface Scratch {
  bytes: Buffer;
}

/** A scratch for {@link asciiJsonText}. */
export function jsonTextScratch(): Scratch {
  return { bytes: Buffer.allocUnsafe(64 * 1024) };
}

// Writes `\uXXXX` for one UTF-16 code unit at `at`; returns the next position.
function escapeUnit(out: Buffer, at: number, unit: number): number {
  out[at] = BACKSLASH;
  out[at + 1] = 0x75; // u
  out[at + 2] = HEX.charCodeAt(unit >> 12);
  out[at + 3] = HEX.charCodeAt((unit >> 8) & 15);
  out[at + 4] = HEX.charCodeAt((unit >> 4) & 15);
  out[at + 5] = HEX.charCodeAt(unit & 15);
  return at + 6;
}

// The code point of the UTF-8 sequence at `i` (valid UTF-8: the caller checked) and its length.
function codePoint(b: Buffer, i: number): [number, number] {
  const c = b[i] as number;
  const c1 = (b[i + 1] as number) & 0x3f;
  if (c < 0xe0) return [((c & 0x1f) << 6) | c1, 2];
  const c2 = (b[i + 2] as number) & 0x3f;
  if (c < 0xf0) return [((c & 0x0f) << 12) | (c1 << 6) | c2, 3];
  return [((c & 0x07) << 18) | (c1 << 12) | (c2 << 6) | ((b[i + 3] as number) & 0x3f), 4];
}

/**
 * The JSON text of `bytes` (valid UTF-8, no byte-order mark) with every non-ASCII
 * character written as `\uXXXX` (a surrogate pair above U+FFFF): an ASCII string that
 * `JSON.parse` reads as exactly the value of the decoded text, and that fails to parse
 * exactly when the decoded text does — inside a string the escape is the character
 * itself, outside one both are a syntax error. `null` (decode the bytes instead) when a
 * non-ASCII character follows a backslash (`\` + escape would read as an escaped
 * backslash) or when non-ASCII bytes are over a quarter of the body.
 *
 * @example asciiJsonText(Buffer.from('{"a":"é"}'), jsonTextScratch()) // '{"a":"\\u00e9"}'
 */
export function asciiJsonText(bytes: Buffer, scratch: Scratch): string | null {
  const n = bytes.length;
  if (isAscii(bytes)) return bytes.toString("latin1");
  const most = Math.floor(n * MAX_NON_ASCII_SHARE);
  // A non-ASCII byte becomes at most 3 characters (2 or 4 bytes: 6 or 12).
  if (scratch.bytes.length < n + 2 * most) scratch.bytes = Buffer.allocUnsafe(n + 2 * most);
  const out = scratch.bytes;
  let at = 0;
  let copied = 0; // bytes of the input written out (ASCII runs) or escaped so far
  let nonAscii = 0;
  for (let block = 0; block < n; block += BLOCK) {
    const end = Math.min(n, block + BLOCK);
    if (copied >= end || isAscii(bytes.subarray(Math.max(block, copied), end))) continue;
    for (let i = Math.max(block, copied); i < end; ) {
      if ((bytes[i] as number) < 0x80) {
        i++;
        continue;
      }
      if (i > 0 && bytes[i - 1] === BACKSLASH) return null;
      at += bytes.copy(out, at, copied, i);
      const [cp, len] = codePoint(bytes, i);
      nonAscii += len;
      if (nonAscii > most) return null;
      if (cp < 0x10000) at = escapeUnit(out, at, cp);
      else {
        at = escapeUnit(out, at, 0xd800 + ((cp - 0x10000) >> 10));
        at = escapeUnit(out, at, 0xdc00 + ((cp - 0x10000) & 0x3ff));
      }
      i += len;
      copied = i;
    }
  }
  at += bytes.copy(out, at, copied, n);
  return out.toString("latin1", 0, at);
}
