/**
 * Context sources (docs/assembler.md, docs/sources.md): the source contract, the registry,
 * in-memory sources, the instruction-file chain, skills, the KB and the memory store
 * source. May import every stage below it (errors … store).
 */

// Markdown masking and import parsing live in text; re-exported here as before.
export { findImports, maskMarkdownCode } from "../text/index.js";
export {
  type ConstraintPolicy,
  type ConstraintRule,
  ConstraintRuleSchema,
  constraintsSource,
  type Observation,
  type ObservationInput,
  ObservationInputSchema,
  type ProfileEntry,
  ProfileEntrySchema,
  plannerSource,
  profileSource,
  type RecallExtras,
  recallSource,
  TaskMemoryBuffer,
  type TaskState,
  TaskStateSchema,
  taskMemorySource,
} from "./inmemory.js";
export {
  AGENTS_OVERRIDE_FILE,
  instructionChainSource,
  instructionItems,
  instructionsSource,
  loadInstructionChain,
  renderInstructionChain,
} from "./instructions/chain.js";
export {
  DEFAULT_INSTRUCTION_FILE_NAMES,
  DEFAULT_MAX_FILE_BYTES,
  DEFAULT_MAX_IMPORT_DEPTH,
  DEFAULT_MAX_TOTAL_BYTES,
  type InstructionChainOptions,
} from "./instructions/options.js";
export type {
  InstructionChain,
  InstructionIssue,
  InstructionIssueKind,
  InstructionPart,
  InstructionReport,
} from "./instructions/parts.js";
export {
  citationAnchor,
  KB_CASCADE_LEVEL,
  type KbChunk,
  KbChunkSchema,
  type KbIssue,
  type KbKind,
  type KbLoad,
  type KbPlan,
  kbLine,
  kbSource,
  kbSourceRef,
  loadKbDir,
  orderChunks,
  planKb,
} from "./kb.js";
export {
  type MemoryStoreSourceOptions,
  memoryStoreSource,
  profileRecordToItem,
  recallHitToItem,
} from "./memory-store.js";
export { createSourceRegistry, type SourceRegistry } from "./registry.js";
export { discoverSkills } from "./skills/discovery.js";
export {
  DEFAULT_SKILL_CAP,
  type InvalidSkill,
  MAX_SKILL_FILE_BYTES,
  MAX_SKILL_PATTERN_LENGTH,
  type RedLine,
  SKILL_QUERY_GUARD,
  type Skill,
  type SkillCatalog,
  type SkillMatch,
  type SkillReport,
  type SkillRoots,
  type SkillSelection,
  type SkillTriggers,
} from "./skills/model.js";
export { isInvalidSkill, parseSkill } from "./skills/parse.js";
export { selectSkills } from "./skills/select.js";
export {
  type SkillsSourceOptions,
  skillCatalogLine,
  skillCatalogText,
  skillReport,
  skillSourceRef,
  skillsSource,
} from "./skills/source.js";
export { staticSource } from "./static.js";
export {
  type RecordedToolCall,
  type ToolCall,
  ToolCallSchema,
  type ToolSpec,
  ToolSpecSchema,
  ToolState,
  toolCallLine,
  toolLine,
  toolStateSource,
} from "./tool-state.js";
export * from "./types.js";
