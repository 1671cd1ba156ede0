/**
 * What sources report beyond their items (`ContextSource.report`), gathered for the
 * manifest: only slots filled successfully are asked, in schema order, then source id.
 */
import type {
  InstructionReport,
  SourceQuery,
  SourceRegistry,
  SourceReport,
} from "../sources/index.js";
import { compareCodePoints } from "../text/index.js";
import type { FilledLayer } from "./layers.js";

/** The first report a `pick` finds over the filled slots' sources, or null. */
function firstReport<T>(
  layers: readonly FilledLayer[],
  registry: SourceRegistry,
  query: SourceQuery,
  pick: (r: SourceReport) => T | undefined,
): T | null {
  for (const l of layers) {
    if (l.fill.status !== "ok") continue;
    const sources = [...registry.sourcesFor(l.slot.kind)].sort((a, b) =>
      compareCodePoints(a.id, b.id),
    );
    for (const source of sources) {
      const report = source.report?.(l.slot, query);
      const found = report == null ? undefined : pick(report);
      if (found !== undefined) return found;
    }
  }
  return null;
}

/** The instruction chain's report (files skipped or cut, with the reason), or null. */
export function instructionsReport(
  layers: readonly FilledLayer[],
  registry: SourceRegistry,
  query: SourceQuery,
): InstructionReport | null {
  return firstReport(layers, registry, query, (r) => r.instructions);
}
