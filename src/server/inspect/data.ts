/**
 * What the inspector page is sent: the turns of a recording (or of one assembly) with each
 * layer's place in its prompt, the default cache pricing, and the diff of two turns.
 */
import { readFile } from "node:fs/promises";
import { InvalidInputError, nodeErrorCode } from "../../errors/index.js";
import {
  compareResponses,
  isErrorResponse,
  layerSpans,
  type ParsedLine,
  parseRecording,
} from "../../workspace/index.js";
import type { DiffView, InspectData, PricingView, TurnView } from "../inspector/types.js";

/** Where the page's turns come from. */
export interface InspectSource {
  /** Shown in the page's header (the file, or the workspace and query). */
  title: string;
  /** The lines, read again on every page load (a growing recording shows its new lines). */
  load(): Promise<ParsedLine[]>;
}

/**
 * Cache pricing the page starts from: an input price per million tokens (the user can
 * change it on the page), cache reads at 0.1× and cache writes at 1.25× of it, and the
 * tiers that carry a breakpoint (static and session; the dynamic tier is never cached).
 */
export const DEFAULT_PRICING: PricingView = {
  inputPerMTok: 3,
  cacheReadMultiplier: 0.1,
  cacheWriteMultiplier: 1.25,
  cachedTiers: ["static", "session"],
};

/**
 * A recording file as the page's source. Kinds this build cannot rerun are shown too.
 *
 * @example const source = recordingSource("/tmp/r.jsonl");
 */
export function recordingSource(file: string): InspectSource {
  return {
    title: file,
    load: async () => {
      let text: string;
      try {
        text = await readFile(file, "utf8");
      } catch (err) {
        const why = nodeErrorCode(err, "unreadable");
        throw new InvalidInputError(`cannot read the recording ${file} (${why})`, "file");
      }
      return parseRecording(text, { anyKind: true });
    },
  };
}

const text = (request: Record<string, unknown>, key: string): string | null => {
  const v = request[key];
  return typeof v === "string" ? v : null;
};

function turnView(line: ParsedLine, index: number): TurnView {
  const { response } = line;
  return {
    index: index + 1,
    line: line.line,
    kind: line.kind,
    at: line.at,
    query: text(line.request, "query") ?? "",
    now: text(line.request, "now"),
    response,
    spans: isErrorResponse(response) ? [] : layerSpans(response),
  };
}

/**
 * The page's data for a list of lines.
 *
 * @example inspectData("r.jsonl", parseRecording(text)).turns.length
 */
export function inspectData(title: string, lines: readonly ParsedLine[]): InspectData {
  return { title, turns: lines.map(turnView), pricing: DEFAULT_PRICING };
}

/** Turn `n` (from 1) of the lines, or invalid input naming `field`. */
function turnAt(lines: readonly ParsedLine[], n: number, field: string): ParsedLine {
  const line = lines[n - 1];
  if (line === undefined) {
    throw new InvalidInputError(`no turn ${n}: the recording has ${lines.length}`, field);
  }
  return line;
}

/**
 * What changed from turn `a` to turn `b` (from 1): the same comparison as `replay`.
 *
 * @example inspectDiff(lines, 1, 2).cacheBreak // "session"
 */
export function inspectDiff(lines: readonly ParsedLine[], a: number, b: number): DiffView {
  const before = turnAt(lines, a, "a");
  const after = turnAt(lines, b, "b");
  return { a, b, ...compareResponses(before.response, after.response) };
}
