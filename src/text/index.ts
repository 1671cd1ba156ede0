/**
 * Text rules (docs/text-and-tokens.md): code points and well-formed text, whitespace,
 * normalization, escaping, numbers, timestamps, Markdown masking, the compilation of
 * user-supplied patterns for the linear-time engine — each defined once — plus the deep freeze of plain
 * data every stage shares. May import only errors.
 */
export {
  compareCodePoints,
  cpAt,
  cpBefore,
  cpLength,
  cpOffsets,
  cpPrefix,
  hasSurrogate,
  isWellFormedText,
  needsWordBoundary,
  WORD_CHAR,
} from "./chars.js";
export { escapedLength, escapeText } from "./escape.js";
export { deepFreeze } from "./frozen.js";
export { findImports, maskMarkdownCode } from "./markdown.js";
export { casefold, normalizeKey } from "./normalize.js";
export { formatFixed, formatScore } from "./numbers.js";
export {
  assertWellFormed,
  ILL_FORMED_MESSAGE,
  isoTimestamp,
  nonBlankString,
  textString,
  wellFormedJson,
} from "./schemas.js";
export { closestName, rejectUnknownFields, strictSchema } from "./strict.js";
export {
  compareInstantParts,
  compareInstants,
  type InstantParts,
  instantMillis,
  parseInstant,
  parseInstantParts,
} from "./time.js";
export {
  compileUserPattern,
  MAX_PATTERN_PROGRAM,
  mayMatchSomeLine,
  type UserPattern,
  type UserPatternOptions,
} from "./user-pattern.js";
export { collapseWs, isBlank, trimWs, WS_CLASS } from "./whitespace.js";
export { displayWidth, shorten, WIDE_RANGES, wrapToWidth } from "./width.js";
