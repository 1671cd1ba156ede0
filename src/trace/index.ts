/** Manifest and trace types of spec 07, the wire contract and the red-line check. */
export {
  type CheckDraftOptions,
  type CompiledRedLine,
  type CompiledRedLines,
  checkDraft,
  compileRedLines,
  DEFAULT_MAX_DRAFT_CHARS,
  DEFAULT_MAX_MATCHES_PER_LINE,
  type DraftCheck,
  EXCERPT_CONTEXT,
  MAX_RED_LINE_PATTERN_LENGTH,
  REGEX_OVERLAP,
  REGEX_WINDOW,
  type RedLineSeverity,
  redLinesFromSkills,
  regexSafetyProblem,
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
  appendTail,
  TAIL_JOIN,
  type TailedPrompt,
  type TailInput,
  type TailOutcome,
} from "./tail.js";
export {
  type AnchorInput,
  toWireContract,
  type WireAssembly,
  type WireOptions,
} from "./wire-build.js";
export {
  checkWireVersion,
  WIRE_CONTRACT_VERSION,
  WIRE_SUPPORTED_MAJOR,
  type WireAnchor,
  WireAnchorSchema,
  type WireBudget,
  WireBudgetSchema,
  type WireContract,
  WireContractSchema,
  type WireLayer,
  WireLayerSchema,
  type WireSpan,
  WireSpanSchema,
} from "./wire-schema.js";
export { parseWireContract } from "./wire-validate.js";
