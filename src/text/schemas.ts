/**
 * The zod forms of the text rules, defined once: every schema in the package that needs a
 * non-blank string or an ISO-8601 timestamp uses these (same rule, same message).
 */
import { z } from "zod";
import { parseInstantParts } from "./time.js";
import { isBlank } from "./whitespace.js";

/** A string that is not empty or whitespace only (spec 01 whitespace). */
export const nonBlankString = z
  .string()
  .refine((s) => !isBlank(s), { message: "must not be blank" });

/** An ISO-8601 timestamp per spec 01 (a missing offset means UTC). */
export const isoTimestamp = z
  .string()
  .refine((s) => parseInstantParts(s) !== null, { message: "must be an ISO-8601 timestamp" });
