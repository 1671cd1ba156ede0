/** Manifest and trace types of spec 07, the wire contract and the red-line check. */
// The regex-safety check lives in text (lower stages use it); re-exported here as before.
export { regexSafetyProblem } from "../text/index.js";
export {
  type CheckDraftOptions,
  checkDraft,
  DEFAULT_MAX_DRAFT_CHARS,
  DEFAULT_MAX_MATCHES_PER_LINE,
  DEFAULT_MAX_SCAN_STEPS,
  type DraftCheck,
  EXCERPT_CONTEXT,
  type IncompleteReason,
  type Violation,
} from "./guard.js";
export {
  type AssemblyManifest,
  deterministicView,
  type LayerItemDecision,
  type LayerManifest,
  type LayerReason,
  type LayerStatus,
  type SourceFailure,
  type Timings,
} from "./manifest.js";
export {
  type CompiledRedLine,
  type CompiledRedLines,
  compileRedLines,
  MAX_RED_LINE_PATTERN_LENGTH,
  type RedLineSeverity,
  redLinesFromSkills,
} from "./red-lines.js";
export {
  type AnchorInput,
  appendTail,
  checkWireVersion,
  parseWireContract,
  TAIL_JOIN,
  type TailedPrompt,
  type TailInput,
  type TailOutcome,
  toWireContract,
  WIRE_CONTRACT_VERSION,
  WIRE_SUPPORTED_MAJOR,
  type WireAnchor,
  WireAnchorSchema,
  type WireAssembly,
  type WireBudget,
  WireBudgetSchema,
  type WireContract,
  WireContractSchema,
  type WireLayer,
  WireLayerSchema,
  type WireOptions,
  type WireSpan,
  WireSpanSchema,
} from "./wire.js";
