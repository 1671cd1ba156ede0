/**
 * The byte caps of the instruction chain (docs/sources.md): the UTF-8 cut, and the total cap
 * applied once the whole chain is known, so the nearest files win (see `chain.ts`).
 */
import type { InstructionIssue, InstructionPart } from "./parts.js";

/** Longest prefix of valid UTF-8 `bytes` at most `max` bytes long, ending on a boundary. */
export function cutUtf8(bytes: Uint8Array, max: number): Uint8Array {
  if (bytes.length <= max) return bytes;
  let n = max;
  // Back up over continuation bytes (10xxxxxx) so the cut never splits a code point.
  while (n > 0 && ((bytes[n] as number) & 0xc0) === 0x80) n--;
  return bytes.subarray(0, n);
}

/** Index ranges `[start, end)` of the groups: a chain file (depth 0) and its imports. */
function groups(parts: readonly InstructionPart[]): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  parts.forEach((p, i) => {
    if (p.depth === 0 || out.length === 0) out.push([i, i + 1]);
    else (out[out.length - 1] as [number, number])[1] = i + 1;
  });
  return out;
}

/**
 * Bytes kept of each part under `maxTotalBytes` (−1: dropped): groups from the nearest
 * (last) to the farthest, each in chain order (the importer before its imports); the part
 * that crosses the cap is cut, and every part after it in that order is dropped.
 */
function keptBytes(parts: readonly InstructionPart[], maxTotalBytes: number): number[] {
  const kept = parts.map(() => -1);
  let room = maxTotalBytes;
  let full = false;
  for (const [start, end] of groups(parts).reverse()) {
    for (let i = start; i < end && !full; i++) {
      const bytes = (parts[i] as InstructionPart).bytes;
      if (bytes <= room) {
        kept[i] = bytes;
        room -= bytes;
        continue;
      }
      full = true;
      const content = new TextEncoder().encode((parts[i] as InstructionPart).content);
      const cut = cutUtf8(content, room).length;
      if (cut > 0) kept[i] = cut;
    }
  }
  return kept;
}

/**
 * Applies the total cap to the parts of a walk (chain order) so the nearest files win:
 * the farthest give way first, cut then dropped. `fileCaps[i]` is the per-file cap note
 * of part i (reported only when the part is kept). Returns the kept parts (chain order)
 * and the cap issues, in chain order.
 */
export function applyTotalCap(
  parts: readonly InstructionPart[],
  fileCaps: ReadonlyArray<string | null>,
  maxTotalBytes: number,
): { parts: InstructionPart[]; issues: InstructionIssue[] } {
  const kept = keptBytes(parts, maxTotalBytes);
  const out: InstructionPart[] = [];
  const issues: InstructionIssue[] = [];
  parts.forEach((p, i) => {
    const k = kept[i] as number;
    if (k < 0) {
      const detail = `dropped: total cap of ${maxTotalBytes} bytes reached by nearer files`;
      issues.push({ path: p.path, kind: "total_cap", detail });
      return;
    }
    const note = fileCaps[i];
    if (note != null) issues.push({ path: p.path, kind: "file_cap", detail: note });
    if (k === p.bytes) {
      out.push(p);
      return;
    }
    const bytes = cutUtf8(new TextEncoder().encode(p.content), k);
    out.push({ ...p, content: new TextDecoder().decode(bytes), bytes: k, truncated: true });
    const detail = `kept ${k} of ${p.bytes} bytes (maxTotalBytes ${maxTotalBytes}; nearer files first)`;
    issues.push({ path: p.path, kind: "total_cap", detail });
  });
  return { parts: out, issues };
}
