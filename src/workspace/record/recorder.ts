/**
 * Writing and reading recordings: {@link createRecorder} appends one line per assembly,
 * {@link parseRecording} reads a file's text back, every line checked (envelope, kind,
 * request, response) before anything is rerun.
 */
import { appendFileSync } from "node:fs";
import { type ErrorObject, InvalidInputError, invalidFromZod } from "../../errors/index.js";
import { deterministicView } from "../../trace/index.js";
import {
  isRecordKind,
  REPLAY_RUNNERS,
  type RecordKind,
  type RecordRequestOf,
  type Replayable,
  withoutStorePassword,
} from "./runners.js";
import {
  RECORD_VERSION,
  type RecordLine,
  RecordLineSchema,
  type RecordResponse,
  responseSchemaOf,
} from "./schema.js";

/**
 * The response a line records: the prompt, the manifest without `timings`, the decision
 * logs (and the conversation plan when there is one), as plain JSON; or the error object.
 */
export function toRecordResponse(result: Replayable | ErrorObject): RecordResponse {
  if ("error" in result) return JSON.parse(JSON.stringify(result)) as RecordResponse;
  const response = {
    prompt: result.prompt,
    manifest: deterministicView(result.manifest),
    memoryPlan: result.memoryPlan,
    segmentPlan: result.segmentPlan,
    ...(result.conversationPlan !== undefined ? { conversationPlan: result.conversationPlan } : {}),
  };
  return JSON.parse(JSON.stringify(response)) as RecordResponse;
}

/** Appends recorded lines to one file. */
export interface Recorder {
  /** The file lines are appended to. */
  readonly file: string;
  /**
   * Appends `{recordVersion, at, kind, request, response}` as one line. The request is
   * checked against the kind's schema first (a request that could not be rerun is a bug
   * of the surface, reported as invalid input at `request.…`); a `postgres://` store URL
   * is written without its password.
   */
  recordLine<K extends RecordKind>(
    kind: K,
    request: RecordRequestOf<K>,
    response: Replayable | ErrorObject,
  ): void;
}

/**
 * A recorder appending to `file`. `at` gives each line's wall-clock time (the surfaces
 * pass the current time; a script may pin it).
 *
 * @example
 * const recorder = createRecorder("/tmp/r.jsonl", { at: () => "2026-11-30T09:00:00.000Z" });
 * recorder.recordLine("assemble", request, assembly);
 */
export function createRecorder(file: string, options: { at: () => string }): Recorder {
  return {
    file,
    recordLine(kind, request, response) {
      const checked = withoutStorePassword(REPLAY_RUNNERS[kind].check(request, ["request"]));
      const line = {
        recordVersion: RECORD_VERSION,
        at: options.at(),
        kind,
        request: checked,
        response: toRecordResponse(response),
      };
      appendFileSync(file, `${JSON.stringify(line)}\n`);
    },
  };
}

/** One line of a file: what it holds and where (1-based). */
export interface ParsedLine extends RecordLine {
  line: number;
}

/** The same error, its message saying which line (from 1) for people. */
function onLine(index: number, err: InvalidInputError): InvalidInputError {
  const message = err.message.replace(/^lines\[\d+\]\.?/, "");
  return new InvalidInputError(`line ${index + 1}: ${message}`, err.path);
}

// One non-blank line of a recording, checked; path `lines[i]…` (i = line number − 1).
function parseLine(text: string, index: number, anyKind: boolean): ParsedLine {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    const why = err instanceof Error ? err.message : "invalid JSON";
    throw new InvalidInputError(`line ${index + 1} is not valid JSON: ${why}`, ["lines", index]);
  }
  const envelope = RecordLineSchema.safeParse(raw);
  if (!envelope.success) throw onLine(index, invalidFromZod(envelope.error, ["lines", index]));
  const { kind, request, response } = envelope.data;
  if (isRecordKind(kind)) {
    try {
      REPLAY_RUNNERS[kind].check(request, ["lines", index, "request"]);
    } catch (err) {
      throw err instanceof InvalidInputError ? onLine(index, err) : err;
    }
  } else if (!anyKind) {
    const known = Object.keys(REPLAY_RUNNERS).join(", ");
    throw new InvalidInputError(`line ${index + 1}: unknown kind "${kind}" (known: ${known})`, [
      "lines",
      index,
      "kind",
    ]);
  }
  const parsed = responseSchemaOf(response).safeParse(response);
  if (!parsed.success)
    throw onLine(index, invalidFromZod(parsed.error, ["lines", index, "response"]));
  return { ...envelope.data, response: parsed.data, line: index + 1 };
}

/**
 * Reads a recording's text: one line per assembly, blank lines skipped. Any line that is
 * not valid JSON, has another `recordVersion`, an unknown kind, or a request or response
 * that breaks its schema makes the whole file invalid (`invalid_input`, path
 * `lines[i].…`, i counted from 0). An empty file is invalid too. `anyKind` accepts kinds
 * this build cannot rerun (their requests unchecked): enough to look at them.
 *
 * @example parseRecording(readFileSync("r.jsonl", "utf8")).length
 */
export function parseRecording(text: string, options: { anyKind?: boolean } = {}): ParsedLine[] {
  const lines: ParsedLine[] = [];
  text.split("\n").forEach((raw, i) => {
    const trimmed = raw.trim();
    if (trimmed !== "") lines.push(parseLine(trimmed, i, options.anyKind === true));
  });
  if (lines.length === 0) throw new InvalidInputError("the recording has no lines", "lines");
  return lines;
}
