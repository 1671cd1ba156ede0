/** createJsonEncoder: the bytes Fastify would send for a JSON answer. */
import { describe, expect, it } from "vitest";
import { createJsonEncoder } from "../../src/server/json-reply.js";

describe("createJsonEncoder", () => {
  it("is Buffer.from(JSON.stringify(value)), byte for byte", () => {
    const encoder = createJsonEncoder();
    const jsonBytes = (v: unknown) => encoder.encode(v);
    const values: unknown[] = [
      { a: "é", b: "\u{1F600}", c: "—", d: "\ud800 lone", e: [1, 2.5, null, true] },
      "plain",
      0,
      null,
      [],
      { big: "—\n".repeat(50_000) },
      { huge: "x".repeat(3_000_000) }, // past the scratch buffer
    ];
    for (const v of values) {
      const bytes = jsonBytes(v);
      expect(Buffer.compare(bytes, Buffer.from(JSON.stringify(v), "utf8"))).toBe(0);
    }
    // Each answer owns its bytes (the scratch is reused).
    const first = jsonBytes({ n: "first" });
    jsonBytes({ n: "second" });
    expect(first.toString("utf8")).toBe('{"n":"first"}');
  });
});
