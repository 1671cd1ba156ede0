/**
 * `--record FILE` of `assemble`, `demo`, `chat` and `serve`: one JSON line per assembly
 * appended to FILE (docs/inspector.md), each stamped with the current time.
 */
import { appendFileSync } from "node:fs";
import { resolve } from "node:path";
import { InvalidInputError, nodeErrorCode } from "../errors/index.js";
import { createRecorder, type Recorder } from "../workspace/record/recorder.js";

/** The wall-clock stamp of a recorded line (the edge reads the clock, never a stage). */
export const recordedAt = (): string => new Date().toISOString();

/**
 * A recorder for `--record FILE`, or null without the flag. The file is created (or
 * opened for appending) now, so an unwritable path fails before anything runs.
 *
 * @example const recorder = recorderFor(flags.record);
 */
export function recorderFor(file: string | undefined): Recorder | null {
  if (file === undefined) return null;
  const path = resolve(file);
  try {
    appendFileSync(path, "");
  } catch (err) {
    const why = nodeErrorCode(err, "unwritable");
    throw new InvalidInputError(
      `cannot write the recording ${JSON.stringify(file)} (${why})`,
      "--record",
    );
  }
  return createRecorder(path, { at: recordedAt });
}
