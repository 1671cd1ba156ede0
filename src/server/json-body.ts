/** The only request body parser: JSON in strict UTF-8, through Fastify's secure parser. */
import { isUtf8 } from "node:buffer";
import type { FastifyInstance } from "fastify";
import { InvalidInputError } from "../errors/index.js";

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
    const decoded = buffer.toString("utf8");
    // A byte-order mark is not part of the text (as a TextDecoder drops it).
    const text = decoded.charCodeAt(0) === 0xfeff ? decoded.slice(1) : decoded;
    secureJson(request, text, (err, value) => {
      if (err === null) {
        done(null, value);
        return;
      }
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
