/** The only request body parser: JSON in strict UTF-8, through Fastify's secure parser. */
import { isUtf8 } from "node:buffer";
import type { FastifyInstance } from "fastify";
import { InvalidInputError } from "../errors/index.js";
import { asciiJsonText, jsonTextScratch } from "./json-text.js";

function charsetOf(contentType: string | undefined): string | null {
  const m = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? "");
  return m ? (m[1] as string).toLowerCase() : null;
}

/**
 * Replaces every body parser with the JSON one (prototype poisoning is an error); each
 * body's size is reported to `countBytes` before it is decoded.
 */
export function registerJsonParser(app: FastifyInstance, countBytes: (n: number) => void): void {
  app.removeAllContentTypeParsers();
  const secureJson = app.getDefaultJsonParser("error", "error");
  // The parse is synchronous: one scratch serves every body of this app in turn.
  const scratch = jsonTextScratch();
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body, done) => {
    const buffer = body as Buffer;
    countBytes(buffer.length);
    const charset = charsetOf(request.headers["content-type"]);
    if (charset !== null && charset !== "utf-8" && charset !== "utf8") {
      done(new InvalidInputError(`unsupported charset "${charset}": send UTF-8`), undefined);
      return;
    }
    // Checked, then decoded: a fatal TextDecoder took as long as parsing the JSON.
    if (!isUtf8(buffer)) {
      done(new InvalidInputError("request body is not valid UTF-8"), undefined);
      return;
    }
    // A byte-order mark is not part of the text (as a TextDecoder drops it).
    const bom = buffer[0] === 0xef && buffer[1] === 0xbb && buffer[2] === 0xbf;
    const bytes = bom ? buffer.subarray(3) : buffer;
    // ASCII with escapes when it can be (the same value, without a two-byte string).
    const ascii = asciiJsonText(bytes, scratch);
    const decoded = ascii ?? bytes.toString("utf8");
    secureJson(request, decoded, (err, value) => {
      if (err === null) {
        done(null, value);
        return;
      }
      // Errors are told on the text as sent (positions, the character at fault).
      const text = ascii === null ? decoded : bytes.toString("utf8");
      if (text.length === 0) {
        done(new InvalidInputError("request body is empty: send a JSON object"), undefined);
        return;
      }
      // Tell a syntax error (with where) from a forbidden prototype key.
      let why = "it contains a forbidden prototype key (__proto__ or constructor.prototype)";
      try {
        JSON.parse(text);
      } catch (syntax) {
        why = syntax instanceof Error ? syntax.message : "syntax error";
      }
      done(new InvalidInputError(`request body is not valid JSON: ${why}`), undefined);
    });
  });
}
