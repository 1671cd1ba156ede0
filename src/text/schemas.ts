/**
 * The zod forms of the text rules, defined once: every schema in the package that takes
 * text uses these (same rule, same message). {@link textString} is the base of them all:
 * well-formed UTF-16 (no lone surrogate), since such text cannot be encoded as UTF-8 for
 * any provider, store or hash.
 */
import { z } from "zod";
import { type FieldPath, formatPath, InvalidInputError } from "../errors/index.js";
import { isWellFormedText } from "./chars.js";
import { parseInstantParts } from "./time.js";
import { isBlank } from "./whitespace.js";

/** The message of every ill-formed text field. */
export const ILL_FORMED_MESSAGE = "must be well-formed Unicode (no lone surrogates)";

/** Any text: a string that is well-formed UTF-16 (use it wherever a schema takes a string). */
export const textString = z.string().refine(isWellFormedText, { message: ILL_FORMED_MESSAGE });

/** A string that is not empty or whitespace only (spec 01 whitespace), well-formed. */
export const nonBlankString = textString.refine((s) => !isBlank(s), {
  message: "must not be blank",
});

/** An ISO-8601 timestamp per spec 01 (a missing offset means UTC). */
export const isoTimestamp = textString.refine((s) => parseInstantParts(s) !== null, {
  message: "must be an ISO-8601 timestamp",
});

/** Every string (and object key) inside a JSON value is well-formed (iterative: no recursion). */
function jsonWellFormed(value: unknown): boolean {
  const stack: unknown[] = [value];
  for (let v = stack.pop(); stack.length > 0 || v !== undefined; v = stack.pop()) {
    if (typeof v === "string") {
      if (!isWellFormedText(v)) return false;
    } else if (typeof v === "object" && v !== null) {
      for (const [k, child] of Object.entries(v)) {
        if (!Array.isArray(v) && !isWellFormedText(k)) return false;
        stack.push(child);
      }
    }
  }
  return true;
}

/** Any JSON value whose strings and keys are all well-formed (tool inputs and the like). */
export const wellFormedJson = z.json().refine(jsonWellFormed, { message: ILL_FORMED_MESSAGE });

/**
 * The same rule for an input checked outside a schema: throws `invalid_input` at `path`.
 *
 * @example assertWellFormed(input.query.text, ["query", "text"]);
 */
export function assertWellFormed(s: string, path: FieldPath): void {
  if (!isWellFormedText(s)) {
    throw new InvalidInputError(`${formatPath(path)}: ${ILL_FORMED_MESSAGE}`, path);
  }
}
