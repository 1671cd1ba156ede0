/**
 * Trace (docs/manifest-wire-guard.md, docs/traces.md): manifest types, the assembled-prompt
 * wire contract, tails, red-line loading, the draft check and the OpenTelemetry span
 * helpers. May import every stage below it (errors … render) and `@opentelemetry/api`.
 */
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
  type ManifestHint,
  type SourceFailure,
  type Timings,
} from "./manifest.js";
export {
  countAttributes,
  errorCode,
  inStep,
  type LazyAttributes,
  startTrace,
  TRACER_NAME,
  TRACER_VERSION,
  type TraceOptions,
  TraceStep,
} from "./otel.js";
export {
  type CompiledRedLine,
  type CompiledRedLines,
  compileRedLines,
  MAX_RED_LINE_PATTERN_LENGTH,
  type RedLineSeverity,
  redLinesFromSkills,
} from "./red-lines.js";
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
  type WireSkills,
  WireSkillsSchema,
  type WireSpan,
  WireSpanSchema,
} from "./wire-schema.js";
export { parseWireContract } from "./wire-validate.js";
