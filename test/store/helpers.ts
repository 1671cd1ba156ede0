import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
