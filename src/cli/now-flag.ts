/**
 * `--now` of `assemble` and `inspect` (not a verb). Its own module: io.ts is loaded by
 * every command line (`--help` included) and must not pull in the text stage.
 */
import { InvalidInputError } from "../errors/index.js";
import { parseInstant } from "../text/index.js";

/** `--now`, checked; the current time without it. */
export function nowFlag(value: string | undefined, clock: () => Date): string {
  if (value === undefined) return clock().toISOString();
  if (parseInstant(value) === null)
    throw new InvalidInputError(
      `--now must be an ISO-8601 timestamp, got ${JSON.stringify(value)}`,
      "--now",
    );
  return value;
}
