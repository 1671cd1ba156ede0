/**
 * The assembler and the session (docs/assembler.md, docs/session-and-cache.md): modes,
 * schemas, slots filled concurrently from sources, the two-layer budget and the manifest.
 * Prompt assembly only: the whole agent request and the loop live in src/agent. May import
 * every stage below it (errors … trace).
 */
export {
  type AssembleInput,
  type AssembleSegment,
  type Assembly,
  type AssemblyLayout,
  assemble,
  DEFAULT_TIMEOUT_MS,
  fillSlot,
} from "./assemble.js";
export type { FetchTiming, SlotFill } from "./fill.js";
export {
  type AssembleContextRequest,
  AssembleContextRequestSchema,
  assembleContext,
  InlineRecallSchema,
  type InlineSources,
  InlineSourcesSchema,
  inlineSources,
} from "./inline.js";
export { checkAssembleInput } from "./input.js";
export { createLayerMemo, LayerMemo } from "./memo/index.js";
export {
  applyFilter,
  compareItems,
  type ItemDecision,
  type ItemReason,
  type PackedSlot,
  packItems,
  type SourcedItem,
} from "./pack.js";
export {
  CLOCK_SLOT,
  CUSTOM_SLOT_PRIORITY,
  createSchemaRegistry,
  DEFAULT_GLOBAL_BUDGET_CHARS,
  DEFAULT_SCHEMAS,
  DEFAULT_SLOT_PRIORITY,
  DEFAULT_SLOT_TIER,
  FALLBACK_MODE,
  type ModeSchema,
  type ResolvedSchema,
  type ResolvedSlot,
  resolveSlot,
  type SchemaRegistry,
} from "./schema.js";
export {
  createSession,
  type Dependency,
  type ReassemblyReport,
  Session,
  type SessionMemoryPolicy,
  type SessionOptions,
  type SessionSegment,
  type SessionState,
  WORKING_MODES,
  type WorkingMode,
} from "./session.js";
export { ASSEMBLE_OPERATION, ASSEMBLE_SPANS } from "./spans.js";
