/**
 * Where each included layer sits in a prompt. A manifest carries each layer's length
 * (`used.chars`, code points) and `versionId` (short hash of its rendered text), not its
 * offsets; the layers follow one another in manifest order with a separator or a cache
 * boundary between them, so each one is found by hashing the candidate text right after
 * the previous one. Nothing is guessed: a span is reported only when its hash matches.
 */
import { shortHash } from "../../cache/index.js";
import { SEGMENT_SEPARATOR } from "../../plan/index.js";
import type { AssemblyResponse } from "./schema.js";

/** One layer's text in the prompt: `prompt.slice(start, end)` (UTF-16 offsets). */
export interface LayerSpan {
  id: string;
  start: number;
  end: number;
}

/** Positions tried after the known joins, when a layout uses another one. */
const SCAN_LIMIT = 512;

/** The UTF-16 index `n` code points after `from`, or -1 when the text ends first. */
function advance(text: string, from: number, n: number): number {
  let i = from;
  for (let k = 0; k < n; k++) {
    if (i >= text.length) return -1;
    const cp = text.codePointAt(i) as number;
    i += cp > 0xffff ? 2 : 1;
  }
  return i;
}

/** Where the next layer may start: right here, after a known join, then each next position. */
function candidates(prompt: string, cursor: number, joins: readonly string[]): number[] {
  const out = [cursor];
  for (const j of joins) if (j !== "" && prompt.startsWith(j, cursor)) out.push(cursor + j.length);
  const last = Math.min(prompt.length, cursor + SCAN_LIMIT);
  for (let p = cursor + 1; p <= last; p++) out.push(p);
  return out;
}

/**
 * The span of every included layer of an assembly whose text is found in its prompt, in
 * manifest (display) order.
 *
 * @example layerSpans(response).map((s) => response.prompt.slice(s.start, s.end))
 */
export function layerSpans(response: AssemblyResponse): LayerSpan[] {
  const { prompt } = response;
  const boundary = response.segmentPlan.cacheBoundary;
  const joins = [SEGMENT_SEPARATOR, typeof boundary === "string" ? boundary : "", "\n\n", "\n"];
  const spans: LayerSpan[] = [];
  let cursor = 0;
  for (const layer of response.manifest.layers) {
    if (layer.status !== "included" || layer.used.chars === 0) continue;
    for (const start of new Set(candidates(prompt, cursor, joins))) {
      const end = advance(prompt, start, layer.used.chars);
      if (end < 0) break;
      if (shortHash(prompt.slice(start, end)) === layer.versionId) {
        spans.push({ id: layer.id, start, end });
        cursor = end;
        break;
      }
    }
  }
  return spans;
}
