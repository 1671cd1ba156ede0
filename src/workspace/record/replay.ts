/**
 * `replay`: reruns every recorded line against the current code and reports, per line,
 * what changed (decisions by id and reason, the prompt's bytes, cache keys). A rerun that
 * fails is compared as its error object, so "now fails closed" is a change like any other.
 */
import { toErrorObject } from "../../errors/index.js";
import { compareResponses, type ResponseDiff } from "./diff.js";
import type { ParsedLine } from "./recorder.js";
import { toRecordResponse } from "./recorder.js";
import { isRecordKind, REPLAY_RUNNERS } from "./runners.js";
import type { RecordResponse } from "./schema.js";

/** One line's outcome. */
export interface ReplayLineReport {
  /** Line number in the file (from 1). */
  line: number;
  kind: string;
  at: string;
  /** The request's query (empty when it has none). */
  query: string;
  /** The request's clock. */
  now: string | null;
  changed: boolean;
  diff: ResponseDiff;
}

/** What `replay` reports. */
export interface ReplayReport {
  lines: ReplayLineReport[];
  /** Lines whose rerun differs from the recording. */
  changed: number;
}

const field = (request: Record<string, unknown>, key: string): string | null => {
  const v = request[key];
  return typeof v === "string" ? v : null;
};

/** Reruns one line; a failure becomes the error object it would have answered with. */
export async function rerunLine(line: ParsedLine, dir: string): Promise<RecordResponse> {
  if (!isRecordKind(line.kind)) return toRecordResponse(toErrorObject(new Error(line.kind)));
  try {
    return toRecordResponse(await REPLAY_RUNNERS[line.kind].run(line.request, dir));
  } catch (err) {
    return toRecordResponse(toErrorObject(err));
  }
}

/**
 * Reruns every line (in order, one at a time); relative paths resolve against `dir`, the
 * recording's directory.
 *
 * @example const report = await replayRecording(parseRecording(text), dirname(file));
 */
export async function replayRecording(
  lines: readonly ParsedLine[],
  dir: string,
): Promise<ReplayReport> {
  const out: ReplayLineReport[] = [];
  for (const line of lines) {
    const diff = compareResponses(line.response, await rerunLine(line, dir));
    out.push({
      line: line.line,
      kind: line.kind,
      at: line.at,
      query: field(line.request, "query") ?? "",
      now: field(line.request, "now"),
      changed: !diff.same,
      diff,
    });
  }
  return { lines: out, changed: out.filter((l) => l.changed).length };
}

const MAX_SHOWN = 200;
function shown(text: string): string {
  const cps = [...text];
  return JSON.stringify(cps.length <= MAX_SHOWN ? text : `${cps.slice(0, MAX_SHOWN).join("")}…`);
}

/** The indented lines describing one changed line. */
function changeLines(diff: ResponseDiff): string[] {
  const out: string[] = [];
  if (diff.errors !== null && diff.errors.before !== diff.errors.after) {
    out.push(
      `  outcome: ${diff.errors.before ?? "assembled"} → ${diff.errors.after ?? "assembled"}`,
    );
  }
  for (const d of diff.decisions) {
    out.push(`  ${d.table} ${d.id}: ${d.before ?? "(absent)"} → ${d.after ?? "(absent)"}`);
  }
  const p = diff.prompt;
  if (p.firstChange !== null) {
    out.push(
      `  prompt: ${p.bytesBefore} → ${p.bytesAfter} bytes, first change at byte ${p.firstChange}`,
    );
  }
  const b = diff.firstChangedLayer;
  if (b !== null) {
    const where =
      b.layer === null ? "first change in the prompt" : `first changed layer ${b.layer}`;
    out.push(`  ${where} (${b.bytesBefore} → ${b.bytesAfter} bytes, at byte ${b.offset}):`);
    out.push(`    - ${shown(b.removed)}`, `    + ${shown(b.added)}`);
  }
  if (diff.cacheKeys.length > 0) {
    const keys = diff.cacheKeys.map((k) => `${k.tier} ${k.before ?? "-"} → ${k.after ?? "-"}`);
    out.push(`  cache keys: ${keys.join("; ")}; cache breaks at ${diff.cacheBreak ?? "-"}`);
  }
  if (out.length === 0 && diff.other.length > 0)
    out.push(`  other fields: ${diff.other.join(", ")}`);
  return out;
}

/**
 * The report for people: one line per recorded line, the changes indented under it, and
 * a last line saying whether anything changed.
 *
 * @example formatReplay(report) // "line 1 · assemble · …: unchanged\nreplay: 1 line, nothing changed\n"
 */
export function formatReplay(report: ReplayReport): string {
  const out: string[] = [];
  for (const l of report.lines) {
    const query = l.query === "" ? "" : ` · ${shown(l.query)}`;
    out.push(
      `line ${l.line} · ${l.kind} · ${l.now ?? l.at}${query}: ${l.changed ? "changed" : "unchanged"}`,
    );
    if (l.changed) out.push(...changeLines(l.diff));
  }
  const n = report.lines.length;
  const which = report.lines.filter((l) => l.changed).map((l) => l.line);
  out.push(
    `replay: ${n} line${n === 1 ? "" : "s"}, ${
      which.length === 0 ? "nothing changed" : `${which.length} changed (line ${which.join(", ")})`
    }`,
  );
  return `${out.join("\n")}\n`;
}
