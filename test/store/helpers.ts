import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unitVector } from "../../src/embed/index.js";
import type { MemoryRecordInput } from "../../src/store/index.js";

/** A fresh temp directory; call the returned cleanup in afterEach. */
export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "promptctx-store-"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export const AS_OF = "2026-08-17T00:00:00Z";

/** A valid record with overridable fields. */
export function rec(
  memoryId: string,
  content: string,
  extra: Partial<MemoryRecordInput> & { capturedAt?: string } = {},
): MemoryRecordInput {
  const { capturedAt = "2026-08-17T00:00:00Z", ...rest } = extra;
  return {
    memoryId,
    userScope: "u1",
    content,
    source: { sourceId: "chat-1", sourceType: "chat", title: "Chat", capturedAt },
    ...rest,
  };
}

/**
 * A seeded generator of unit vectors of `dims` dimensions (xorshift32, Gaussian-ish by
 * summing uniforms): the large-scope index tests of both dialects draw the same vectors.
 */
export function seededUnitVectors(seed: number, dims: number): () => Float32Array {
  let x = seed >>> 0 || 1;
  const u = () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 2 ** 32;
  };
  return () => unitVector(Array.from({ length: dims }, () => u() + u() + u() - 1.5));
}
