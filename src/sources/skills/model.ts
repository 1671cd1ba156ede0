/**
 * Skills (docs/sources.md "Skills (SKILL.md)"): discovery under ordered roots, frontmatter
 * validation, trigger evaluation with a deterministic selection, the compact catalog and
 * the `skill_catalog` / `skills` source.
 *
 * This module holds the types, the limits and the choices below; the work is in
 * `parse.ts` (SKILL.md), `discovery.ts` (roots), `select.ts` (triggers)
 * and `source.ts` (catalog and source).
 *
 * Choices (documented so peers can mirror them):
 * - `name` is 1–64 chars of `[a-z0-9-]` with no leading, trailing or doubled hyphen
 *   (`^[a-z0-9]+(-[a-z0-9]+)*$`, the Agent Skills rule), and equals the directory name.
 * - `description` is trimmed; 1–1024 code points after trimming.
 * - An optional key written with an empty value (`license:` → YAML null) counts as absent.
 * - `allowed-tools` as a string is split on whitespace and commas (`Read Grep`, `Read, Grep`).
 * - Unknown top-level keys, and unknown keys inside `triggers`, are ignored.
 * - A skill matches when ANY of its triggers matches (keywords OR patterns OR modes). A
 *   skill without triggers (or with only empty lists) never auto-matches; it is still in
 *   the catalog.
 * - Keywords match case-insensitively as whole words on `normalizeKey` of both sides.
 *   A keyword edge that is a Han/Hiragana/Katakana character needs no word boundary on
 *   that side (those scripts are written without spaces).
 * - Patterns (trigger or red line) are user patterns (`compileUserPattern`,
 *   text/user-pattern.ts): RE2 syntax on the linear-time engine, case-sensitive unless
 *   written `(?i)`, rejected above 500 code points, and tested on the raw query's first
 *   10,000 code points. A pattern RE2 cannot run (lookaround, backreferences) makes its
 *   skill invalid with the reason, and `selectSkills` refuses a hand-built catalog holding
 *   one (`unsupported_pattern` at the pattern's path). JavaScript's backtracking engine
 *   never runs a user pattern.
 * - On a name clash the earlier root wins; the later one is reported in `shadowed`. Only
 *   valid skills take part: an invalid skill is reported and shadows nothing.
 * - SKILL.md must be UTF-8 and at most 1 MiB; its `sha256` is the first 16 hex of the
 *   SHA-256 of the file bytes (a leading BOM is hashed, and skipped for parsing).
 */

// ---------------------------------------------------------------------------------------
// types

/** Ordered skill roots: earlier roots win on a name clash. */
export interface SkillRoots {
  roots: string[];
  /**
   * Directories skills may be read from (files/confine.ts); default: the roots
   * themselves. A workspace passes its own root, so a configured root outside it is refused.
   */
  allowed?: string[];
}

/** When a skill's body enters the prompt. Keywords are stored normalized (`normalizeKey`). */
export interface SkillTriggers {
  keywords?: string[];
  /** Pattern sources (RE2 syntax), validated at load (`compileUserPattern`). */
  patterns?: string[];
  modes?: string[];
}

/** A red line a skill contributes to the draft check of docs/manifest-wire-guard.md: exactly one of literal/pattern. */
export interface RedLine {
  id: string;
  severity: "block" | "warn" | "review";
  literal?: string;
  pattern?: string;
}

/** A valid, loaded skill. */
export interface Skill {
  name: string;
  description: string;
  /** Path of the SKILL.md file. */
  path: string;
  /** First 16 hex of the SHA-256 of the SKILL.md bytes. */
  sha256: string;
  license?: string;
  metadata?: Record<string, string>;
  allowedTools?: string[];
  triggers: SkillTriggers;
  /** Higher first; default 0. */
  priority: number;
  redLines: RedLine[];
  /** Markdown after the frontmatter, line endings normalized to `\n`, trimmed. */
  body: string;
}

/** A SKILL.md that failed validation, with the precise reason. */
export interface InvalidSkill {
  path: string;
  reason: string;
}

/** Everything discovery found. */
export interface SkillCatalog {
  /** Valid skills, name ascending by code point. */
  skills: Skill[];
  invalid: InvalidSkill[];
  /** A later root's skill hidden by an earlier root's skill of the same name (`by` = winner path). */
  shadowed: Array<{ name: string; path: string; by: string }>;
}

/** One matched skill with the triggers that fired, e.g. `keyword:"migration"`, `pattern:/^fix/`, `mode:react`. */
export interface SkillMatch {
  name: string;
  priority: number;
  reasons: string[];
}

/** The outcome of trigger evaluation. */
export interface SkillSelection {
  /** priority desc → name asc, at most `cap`. */
  matched: SkillMatch[];
  /** True when no skill body enters (nothing matched, or the cap is 0). */
  abstained: boolean;
  /** Names that matched but fell over the cap, in selection order. */
  capped: string[];
  /** Groups (≥ 2 names, name asc) of matching skills sharing a priority, priority desc. */
  ties: string[][];
  /** Pairs of matching skills (a < b) fired by the same keyword or pattern. */
  overlaps: Array<{ a: string; b: string; on: string }>;
}

/**
 * What the manifest says of skill selection for one query (docs/sources.md, issue 11): the matched
 * skills with the triggers that fired and their version, the cap and what fell over it,
 * ties and overlaps, the invalid and shadowed skills with their reasons, and whether the
 * selection abstained. Paths are relative to the source's `root` when they lie inside it.
 */
export interface SkillReport {
  /** The slot kind the report belongs to (`skills`). */
  slot: string;
  /** Whose bodies enter: priority desc → name asc, at most `cap`. */
  matched: Array<SkillMatch & { version: string }>;
  /** True when no skill body enters (nothing matched, or the cap is 0). */
  abstained: boolean;
  cap: number;
  /** Matched but over the cap, in selection order. */
  capped: string[];
  ties: string[][];
  overlaps: Array<{ a: string; b: string; on: string }>;
  /** Skills that failed validation (name = their directory), with the precise reason. */
  invalid: Array<{ name: string; path: string; reason: string }>;
  shadowed: Array<{ name: string; path: string; by: string }>;
}

// ---------------------------------------------------------------------------------------
// limits

/** Longest accepted trigger / red-line regex source, in code points. */
export const MAX_SKILL_PATTERN_LENGTH = 500;
/** Patterns are tested on this many leading code points of the query. */
export const SKILL_QUERY_GUARD = 10_000;
/** Largest SKILL.md read, in bytes. */
export const MAX_SKILL_FILE_BYTES = 1024 * 1024;
/** Default number of matched skills whose bodies enter. */
export const DEFAULT_SKILL_CAP = 3;
