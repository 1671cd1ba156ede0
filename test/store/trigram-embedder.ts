/**
 * A small deterministic embedder standing for a model in the vector tests of both
 * dialects: vectors of character trigram hashes, unit length; `fail` makes it throw a
 * `connection_refused` as an unreachable remote embedder would.
 */
import { type Embedder, unitVector } from "../../src/embed/index.js";

export function trigramEmbedder(
  id = "trigram@1/64",
  dims = 64,
): Embedder & { fail: boolean; calls: number } {
  const e = {
    id,
    dimensions: dims,
    batchSize: 4,
    fail: false,
    calls: 0,
    async embed(texts: readonly string[]) {
      e.calls++;
      if (e.fail)
        throw Object.assign(
          new Error("cannot reach the embedder at http://127.0.0.1:9/v1/embeddings"),
          { code: "connection_refused" },
        );
      return texts.map((t) => {
        const v = new Float32Array(dims);
        const s = ` ${t.toLowerCase()} `;
        for (let i = 0; i + 3 <= s.length; i++) {
          let h = 0;
          for (const ch of s.slice(i, i + 3)) h = (h * 31 + ch.codePointAt(0)!) >>> 0;
          v[h % dims]! += 1;
        }
        return unitVector(v);
      });
    },
  };
  return e;
}
