/**
 * Memory selection (docs/memory-selection.md): recall hits → scope and confidence gates →
 * authority → dedupe → conflict slots → top-k/budget packing → `<recalled_memory>` block.
 * Imports errors, text and tokens.
 */
export { type AdapterOptions, candidatesFromRecallHits, type RecallHit } from "./adapter.js";
export { type MemoryDecision, type MemoryReason, withHitTokens } from "./decision.js";
export type { HitChars } from "./rank.js";
export {
  BLOCK_CLOSE,
  memoryHitChars,
  type RenderableHit,
  renderBlockOpen,
  renderMemoryBlock,
  renderMemoryHit,
} from "./render.js";
export {
  AUTHORITIES,
  AUTHORITY_RANK,
  type Authority,
  type Candidate,
  type CandidateInput,
  CandidateSchema,
  DEFAULT_POLICY,
  MatchSchema,
  type MemoryMatch,
  type Policy,
  type PolicyInput,
  PolicySchema,
  type Provenance,
  ProvenanceSchema,
  provenanceFields,
  type SelectMemoryRequest,
  SelectMemoryRequestSchema,
} from "./schema.js";
export {
  type GateOutcome,
  gateCandidates,
  type MemoryPlan,
  type SelectOptions,
  selectMemoryContext,
} from "./select.js";
export {
  DEFAULT_GATE_MODE,
  GATE_MODES,
  type GateMode,
  screenMemoryText,
  screenText,
  TAKEOVER_RULES,
  type TakeoverHit,
  type TakeoverRule,
} from "./takeover.js";
