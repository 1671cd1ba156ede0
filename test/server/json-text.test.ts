/** asciiJsonText: the same JSON value (or the same failure) as the body decoded as UTF-8. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { asciiJsonText, jsonTextScratch } from "../../src/server/json-text.js";

/** Text with ASCII, Latin-1, CJK, astral characters and JSON's own escapes mixed. */
const text = fc.string({
  unit: fc.oneof(
    fc.constantFrom("a", " ", '"', "\\", "\n", "é", "ß", "中", "文", "😀", "\u2028", "\ufeff"),
    fc.string({ unit: "grapheme", maxLength: 3 }),
  ),
  maxLength: 40,
});
const { value } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    text,
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(text, tie("value"), { maxKeys: 4 }),
  ),
}));

function parsed(s: string): { ok: true; v: unknown } | { ok: false } {
  try {
    return { ok: true, v: JSON.parse(s) };
  } catch {
    return { ok: false };
  }
}

describe("asciiJsonText", () => {
  it("gives an ASCII text JSON.parse reads as the decoded text's value", () => {
    const scratch = jsonTextScratch();
    fc.assert(
      fc.property(value, fc.boolean(), (v, spaced) => {
        // ASCII padding keeps most bodies under the share of non-ASCII bytes decoded instead.
        const body = { pad: "x".repeat(400), v };
        const bytes = Buffer.from(JSON.stringify(body, null, spaced ? 1 : undefined), "utf8");
        const ascii = asciiJsonText(bytes, scratch);
        if (ascii === null) return;
        expect(/^[\x00-\x7f]*$/.test(ascii)).toBe(true);
        expect(JSON.parse(ascii)).toEqual(JSON.parse(bytes.toString("utf8")));
      }),
      { numRuns: 400 },
    );
  });

  it("fails to parse exactly when the decoded text does (non-ASCII outside strings, after a backslash)", () => {
    const scratch = jsonTextScratch();
    const piece = fc.constantFrom(
      '{"a":',
      '"x',
      '"',
      "é",
      "中",
      "😀",
      "\\",
      "\\\\",
      "1",
      ",",
      "}",
      "[",
      "]",
      " ",
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const bytes = Buffer.from(pieces.join(""), "utf8");
        const ascii = asciiJsonText(bytes, scratch);
        const decoded = parsed(bytes.toString("utf8"));
        if (ascii === null) return;
        const mine = parsed(ascii);
        expect(mine.ok).toBe(decoded.ok);
        if (mine.ok && decoded.ok) expect(mine.v).toEqual(decoded.v);
      }),
      { numRuns: 2000 },
    );
  });

  it("hands a text mostly non-ASCII, or one with a backslash before a non-ASCII character, back for decoding", () => {
    const scratch = jsonTextScratch();
    expect(asciiJsonText(Buffer.from(JSON.stringify({ a: "中文".repeat(100) })), scratch)).toBe(
      null,
    );
    expect(asciiJsonText(Buffer.from('{"a":"x\\é"}'), scratch)).toBe(null);
    const long = JSON.stringify({ a: `${"x".repeat(5000)}é${"y".repeat(3000)}😀` });
    expect(JSON.parse(asciiJsonText(Buffer.from(long), scratch) as string)).toEqual(
      JSON.parse(long),
    );
    expect(asciiJsonText(Buffer.from('{"a":1}'), scratch)).toBe('{"a":1}');
  });
});
