/**
 * What sources report beyond their items (`ContextSource.report`), gathered for the
 * manifest: only slots filled successfully are asked, in schema order, then source id.
 */
import type {
  InstructionReport,
  SkillReport,
  SourceQuery,
  SourceRegistry,
  SourceReport,
} from "../sources/index.js";
import { compareCodePoints } from "../text/index.js";
import type { ManifestHint } from "../trace/index.js";
import type { FilledLayer } from "./layers.js";

/** Every report of the filled slots' sources, in schema order, then source id. */
function* reports(
  layers: readonly FilledLayer[],
  registry: SourceRegistry,
  query: SourceQuery,
): Generator<{ slot: string; sourceId: string; report: SourceReport }> {
  for (const l of layers) {
    if (l.fill.status !== "ok") continue;
    const sources = [...registry.sourcesFor(l.slot.kind)].sort((a, b) =>
      compareCodePoints(a.id, b.id),
    );
    for (const source of sources) {
      const report = source.report?.(l.slot, query);
      if (report != null) yield { slot: l.slot.kind, sourceId: source.id, report };
    }
  }
}

/** The first report a `pick` finds over the filled slots' sources, or null. */
function firstReport<T>(
  layers: readonly FilledLayer[],
  registry: SourceRegistry,
  query: SourceQuery,
  pick: (r: SourceReport) => T | undefined,
): T | null {
  for (const { report } of reports(layers, registry, query)) {
    const found = pick(report);
    if (found !== undefined) return found;
  }
  return null;
}

/**
 * The sources' hints (e.g. `recall_full_text_only`), each with its slot and source, in
 * schema order, then source id; the same hint once per slot and source.
 */
export function hintsReport(
  layers: readonly FilledLayer[],
  registry: SourceRegistry,
  query: SourceQuery,
): ManifestHint[] {
  const out: ManifestHint[] = [];
  const seen = new Set<string>();
  for (const { slot, sourceId, report } of reports(layers, registry, query)) {
    for (const h of report.hints ?? []) {
      const key = JSON.stringify([slot, sourceId, h.code]);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ slot, sourceId, code: h.code, message: h.message });
    }
  }
  return out;
}

/** The instruction chain's report (files skipped or cut, with the reason), or null. */
export function instructionsReport(
  layers: readonly FilledLayer[],
  registry: SourceRegistry,
  query: SourceQuery,
): InstructionReport | null {
  return firstReport(layers, registry, query, (r) => r.instructions);
}

/** The skill selection's report (matched skills and why, or abstained), or null. */
export function skillsReport(
  layers: readonly FilledLayer[],
  registry: SourceRegistry,
  query: SourceQuery,
): SkillReport | null {
  return firstReport(layers, registry, query, (r) => r.skills);
}
