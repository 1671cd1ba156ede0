/**
 * Skills (spec 06 "Skills (SKILL.md)"): discovery under ordered roots, frontmatter
 * validation, trigger evaluation with a deterministic selection, the compact catalog and
 * the `skill_catalog` / `skills` source.
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
 * - Patterns are compiled with the `u` flag (case-sensitive unless written otherwise),
 *   rejected above 500 code points, and tested on the raw query's first 10,000 code
 *   points. JavaScript cannot interrupt a running regex; the guard is the length cap.
 * - On a name clash the earlier root wins; the later one is reported in `shadowed`. Only
 *   valid skills take part: an invalid skill is reported and shadows nothing.
 * - SKILL.md must be UTF-8 and at most 1 MiB; its `sha256` is the first 16 hex of the
 *   SHA-256 of the file bytes (a leading BOM is hashed, and skipped for parsing).
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { parseDocument } from "yaml";
import { shortHash } from "../cache/index.js";
import { InvalidInputError } from "../errors/index.js";
import {
  collapseWs,
  compareCodePoints,
  cpLength,
  isBlank,
  normalizeKey,
  trimWs,
} from "../text/index.js";
import type { ContextSource, SourceItem } from "./types.js";

// ---------------------------------------------------------------------------------------
// types

/** Ordered skill roots: earlier roots win on a name clash. */
export interface SkillRoots {
  roots: string[];
}

/** When a skill's body enters the prompt. Keywords are stored normalized (`normalizeKey`). */
export interface SkillTriggers {
  keywords?: string[];
  /** Regex sources, validated at load (compiled with the `u` flag). */
  patterns?: string[];
  modes?: string[];
}

/** A red line a skill contributes to the draft check of spec 07: exactly one of literal/pattern. */
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

const NAME_RE = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const SEVERITIES = ["block", "warn", "review"] as const;

// ---------------------------------------------------------------------------------------
// parsing

class SkillError extends Error {}

function fail(reason: string): never {
  throw new SkillError(reason);
}

const describe = (v: unknown): string =>
  v === null
    ? "null"
    : Array.isArray(v)
      ? "a list"
      : typeof v === "object"
        ? "a mapping"
        : typeof v;

function isMapping(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The value of an optional key; YAML null (an empty value) counts as absent. */
function opt(obj: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(obj, key) && obj[key] !== null ? obj[key] : undefined;
}

function stringList(value: unknown, where: string): string[] {
  if (!Array.isArray(value)) fail(`${where}: must be a list of strings, got ${describe(value)}`);
  return value.map((v, i) => {
    if (typeof v !== "string") fail(`${where}[${i}]: must be a string, got ${describe(v)}`);
    if (isBlank(v)) fail(`${where}[${i}]: must not be blank`);
    return v;
  });
}

/** Compiles a regex source under the pattern rules, or fails with the reason. */
function checkPattern(source: string, where: string): string {
  const n = cpLength(source);
  if (n > MAX_SKILL_PATTERN_LENGTH) {
    fail(`${where}: pattern is ${n} chars, the limit is ${MAX_SKILL_PATTERN_LENGTH}`);
  }
  try {
    new RegExp(source, "u");
  } catch (err) {
    fail(`${where}: invalid regex /${source}/u: ${(err as Error).message}`);
  }
  return source;
}

function parseTriggers(value: unknown): SkillTriggers {
  if (!isMapping(value)) fail(`triggers: must be a mapping, got ${describe(value)}`);
  const out: SkillTriggers = {};
  const keywords = opt(value, "keywords");
  if (keywords !== undefined) {
    out.keywords = stringList(keywords, "triggers.keywords").map((k) => normalizeKey(k));
  }
  const patterns = opt(value, "patterns");
  if (patterns !== undefined) {
    out.patterns = stringList(patterns, "triggers.patterns").map((p, i) =>
      checkPattern(p, `triggers.patterns[${i}]`),
    );
  }
  const modes = opt(value, "modes");
  if (modes !== undefined) out.modes = stringList(modes, "triggers.modes");
  return out;
}

function parseRedLines(value: unknown): RedLine[] {
  if (!Array.isArray(value)) fail(`redLines: must be a list, got ${describe(value)}`);
  const seen = new Set<string>();
  return value.map((raw, i) => {
    const where = `redLines[${i}]`;
    if (!isMapping(raw)) fail(`${where}: must be a mapping, got ${describe(raw)}`);
    const id = raw.id;
    if (typeof id !== "string" || isBlank(id)) fail(`${where}.id: must be a non-blank string`);
    if (seen.has(id)) fail(`${where}.id: duplicate red line id "${id}"`);
    seen.add(id);
    const severity = raw.severity;
    if (typeof severity !== "string" || !(SEVERITIES as readonly string[]).includes(severity)) {
      fail(`${where}.severity: must be one of ${SEVERITIES.join(", ")}`);
    }
    const literal = opt(raw, "literal");
    const pattern = opt(raw, "pattern");
    if ((literal === undefined) === (pattern === undefined)) {
      fail(`${where}: needs exactly one of literal or pattern`);
    }
    const line: RedLine = { id, severity: severity as RedLine["severity"] };
    if (literal !== undefined) {
      if (typeof literal !== "string" || literal === "") {
        fail(`${where}.literal: must be a non-empty string`);
      }
      line.literal = literal;
    } else {
      if (typeof pattern !== "string" || pattern === "") {
        fail(`${where}.pattern: must be a non-empty string`);
      }
      line.pattern = checkPattern(pattern, `${where}.pattern`);
    }
    return line;
  });
}

/** Splits `---` frontmatter from the body; fails when there is none. */
function splitFrontmatter(text: string): { yaml: string; body: string } {
  const src = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const lines = src.split("\n").map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
  if (lines[0] === undefined || trimWs(lines[0]) !== "---") {
    fail("no frontmatter: the file must start with a '---' line");
  }
  const end = lines.findIndex((l, i) => i > 0 && trimWs(l) === "---");
  if (end < 0) fail("unterminated frontmatter: no closing '---' line");
  return { yaml: lines.slice(1, end).join("\n"), body: lines.slice(end + 1).join("\n") };
}

function parseFrontmatter(yaml: string): Record<string, unknown> {
  const doc = parseDocument(yaml, { schema: "core", uniqueKeys: true, prettyErrors: true });
  const err = doc.errors[0];
  if (err !== undefined) fail(`malformed YAML: ${err.message.split("\n")[0]}`);
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    fail(`malformed YAML: ${(e as Error).message.split("\n")[0]}`);
  }
  if (!isMapping(data)) fail(`frontmatter must be a YAML mapping, got ${describe(data)}`);
  return data;
}

function buildSkill(path: string, text: string, dirName: string): Skill {
  const { yaml, body } = splitFrontmatter(text);
  const fm = parseFrontmatter(yaml);

  const name = opt(fm, "name");
  if (typeof name !== "string") fail("name: required string is missing");
  if (name.length < 1 || name.length > 64 || !NAME_RE.test(name)) {
    fail(
      `name "${name}": must be 1-64 chars of [a-z0-9-] without leading, trailing or doubled hyphens`,
    );
  }
  if (name !== dirName) fail(`name "${name}" does not match its directory "${dirName}"`);

  const rawDescription = opt(fm, "description");
  if (typeof rawDescription !== "string") fail("description: required string is missing");
  const description = trimWs(rawDescription);
  const dLen = cpLength(description);
  if (dLen === 0) fail("description: must not be empty");
  if (dLen > 1024) fail(`description: ${dLen} chars, the limit is 1024`);

  const skill: Skill = {
    name,
    description,
    path,
    sha256: shortHash(text),
    triggers: {},
    priority: 0,
    redLines: [],
    body: trimWs(body.replace(/\r\n?/g, "\n")),
  };

  const license = opt(fm, "license");
  if (license !== undefined) {
    if (typeof license !== "string") fail(`license: must be a string, got ${describe(license)}`);
    skill.license = license;
  }
  const metadata = opt(fm, "metadata");
  if (metadata !== undefined) {
    if (!isMapping(metadata)) fail(`metadata: must be a mapping, got ${describe(metadata)}`);
    const out: Record<string, string> = {};
    for (const key of Object.keys(metadata).sort(compareCodePoints)) {
      const v = metadata[key];
      if (typeof v !== "string") fail(`metadata.${key}: must be a string, got ${describe(v)}`);
      out[key] = v;
    }
    skill.metadata = out;
  }
  const tools = opt(fm, "allowed-tools");
  if (tools !== undefined) {
    skill.allowedTools =
      typeof tools === "string"
        ? collapseWs(tools.replace(/,/g, " "))
            .split(" ")
            .filter((t) => t !== "")
        : stringList(tools, "allowed-tools");
  }
  const triggers = opt(fm, "triggers");
  if (triggers !== undefined) skill.triggers = parseTriggers(triggers);
  const priority = opt(fm, "priority");
  if (priority !== undefined) {
    if (typeof priority !== "number" || !Number.isSafeInteger(priority)) {
      fail(`priority: must be an integer, got ${JSON.stringify(priority) ?? describe(priority)}`);
    }
    skill.priority = priority;
  }
  const redLines = opt(fm, "redLines");
  if (redLines !== undefined) skill.redLines = parseRedLines(redLines);
  return skill;
}

/**
 * Parses and validates one SKILL.md. Never throws: a failure comes back as an
 * {@link InvalidSkill} whose reason names the field (`name "Foo": …`, `triggers.patterns[0]: …`).
 *
 * @example parseSkill("s/db/SKILL.md", "---\nname: db\ndescription: Databases\n---\nUse psql.", "db")
 * // { name: "db", description: "Databases", body: "Use psql.", priority: 0, … }
 */
export function parseSkill(path: string, text: string, dirName: string): Skill | InvalidSkill {
  try {
    return buildSkill(path, text, dirName);
  } catch (err) {
    if (err instanceof SkillError) return { path, reason: err.message };
    throw err;
  }
}

/** True for the {@link InvalidSkill} branch of {@link parseSkill}. */
export function isInvalidSkill(s: Skill | InvalidSkill): s is InvalidSkill {
  return "reason" in s;
}

// ---------------------------------------------------------------------------------------
// discovery

function errCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "error";
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

async function readSkillFile(file: string): Promise<{ text: string } | { reason: string } | null> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(file);
  } catch (err) {
    const code = errCode(err);
    if (code === "ENOENT" || code === "ENOTDIR") return null; // not a skill directory
    return { reason: `cannot read SKILL.md: ${code}` };
  }
  if (!info.isFile()) return { reason: "SKILL.md is not a regular file" };
  if (info.size > MAX_SKILL_FILE_BYTES) {
    return { reason: `SKILL.md is ${info.size} bytes, the limit is ${MAX_SKILL_FILE_BYTES}` };
  }
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    return { reason: `cannot read SKILL.md: ${errCode(err)}` };
  }
  try {
    // ignoreBOM keeps a BOM in the text, so the hash of the text is the hash of the bytes.
    return { text: new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes) };
  } catch {
    return { reason: "SKILL.md is not valid UTF-8" };
  }
}

/**
 * Discovers `<root>/<name>/SKILL.md` one level deep under each root, in root order.
 * A missing root is fine; non-directories and directories without SKILL.md are ignored;
 * entries are visited in code-point order, so the catalog is deterministic.
 *
 * @example await discoverSkills({ roots: [".promptctx/skills", ".agents/skills", ".claude/skills"] })
 */
export async function discoverSkills(options: SkillRoots): Promise<SkillCatalog> {
  if (!Array.isArray(options?.roots) || options.roots.some((r) => typeof r !== "string")) {
    throw new InvalidInputError("roots must be a list of paths", "roots");
  }
  const byName = new Map<string, Skill>();
  const invalid: InvalidSkill[] = [];
  const shadowed: SkillCatalog["shadowed"] = [];
  const seenRoots = new Set<string>();
  for (const root of options.roots) {
    const key = resolve(root);
    if (seenRoots.has(key)) continue;
    seenRoots.add(key);
    let names: string[];
    try {
      names = (await readdir(root)).sort(compareCodePoints);
    } catch (err) {
      const code = errCode(err);
      if (code !== "ENOENT" && code !== "ENOTDIR") {
        invalid.push({ path: root, reason: `cannot read skills root: ${code}` });
      }
      continue;
    }
    for (const dirName of names) {
      const dir = join(root, dirName);
      if (!(await isDirectory(dir))) continue;
      const file = join(dir, "SKILL.md");
      const read = await readSkillFile(file);
      if (read === null) continue;
      if ("reason" in read) {
        invalid.push({ path: file, reason: read.reason });
        continue;
      }
      const parsed = parseSkill(file, read.text, dirName);
      if (isInvalidSkill(parsed)) {
        invalid.push(parsed);
        continue;
      }
      const winner = byName.get(parsed.name);
      if (winner !== undefined) shadowed.push({ name: parsed.name, path: file, by: winner.path });
      else byName.set(parsed.name, parsed);
    }
  }
  const skills = [...byName.values()].sort((a, b) => compareCodePoints(a.name, b.name));
  return { skills, invalid, shadowed };
}

// ---------------------------------------------------------------------------------------
// trigger evaluation

const WORD_CHAR = /[\p{L}\p{N}\p{M}_]/u;
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

function firstChar(s: string): string {
  return String.fromCodePoint(s.codePointAt(0) as number);
}
function lastChar(s: string): string {
  const chars = Array.from(s.slice(-2));
  return chars[chars.length - 1] as string;
}
function charBefore(s: string, i: number): string | null {
  if (i === 0) return null;
  return lastChar(s.slice(Math.max(0, i - 2), i));
}
function charAt(s: string, i: number): string | null {
  return i >= s.length ? null : firstChar(s.slice(i));
}

/** A side needs a word boundary unless its keyword edge is a non-word or unspaced-script char. */
function needsBoundary(edge: string): boolean {
  return WORD_CHAR.test(edge) && !UNSPACED.test(edge);
}

/** Whole-word occurrence of an already-normalized keyword in an already-normalized text. */
function containsWord(text: string, keyword: string): boolean {
  if (keyword === "") return false;
  const checkStart = needsBoundary(firstChar(keyword));
  const checkEnd = needsBoundary(lastChar(keyword));
  for (let i = text.indexOf(keyword); i >= 0; i = text.indexOf(keyword, i + 1)) {
    const before = checkStart ? charBefore(text, i) : null;
    const after = checkEnd ? charAt(text, i + keyword.length) : null;
    if (
      (before === null || !WORD_CHAR.test(before)) &&
      (after === null || !WORD_CHAR.test(after))
    ) {
      return true;
    }
  }
  return false;
}

/** The first `n` code points of `s`. */
function cpPrefix(s: string, n: number): string {
  if (s.length <= n) return s;
  let i = 0;
  for (let k = 0; k < n && i < s.length; k++) {
    const c = s.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < s.length ? 2 : 1;
  }
  return s.slice(0, i);
}

const keywordReason = (k: string) => `keyword:${JSON.stringify(k)}`;
const patternReason = (p: string) => `pattern:/${p}/`;

/**
 * Evaluates every skill's triggers against the query and mode: priority desc → name asc,
 * capped (default 3); ties, overlaps and the cap are reported; nothing → `abstained`.
 *
 * @example selectSkills(catalog, { text: "run the migration", mode: "react" })
 * // { matched: [{ name: "db", priority: 5, reasons: ['keyword:"migration"'] }], abstained: false, … }
 */
export function selectSkills(
  catalog: SkillCatalog,
  query: { text: string; mode: string },
  options: { cap?: number } = {},
): SkillSelection {
  const cap = options.cap ?? DEFAULT_SKILL_CAP;
  if (!Number.isSafeInteger(cap) || cap < 0) {
    throw new InvalidInputError("cap must be a non-negative integer", "cap");
  }
  const normalized = normalizeKey(query.text);
  const guarded = cpPrefix(query.text, SKILL_QUERY_GUARD);
  const all: SkillMatch[] = [];
  const firedBy = new Map<string, string[]>(); // keyword/pattern reason → skill names
  for (const skill of catalog.skills) {
    const reasons: string[] = [];
    const t = skill.triggers;
    for (const k of t.keywords ?? []) {
      if (containsWord(normalized, k)) reasons.push(keywordReason(k));
    }
    for (const p of t.patterns ?? []) {
      if (new RegExp(p, "u").test(guarded)) reasons.push(patternReason(p));
    }
    for (const m of t.modes ?? []) {
      if (m === query.mode) reasons.push(`mode:${m}`);
    }
    const unique = [...new Set(reasons)];
    if (unique.length === 0) continue;
    all.push({ name: skill.name, priority: skill.priority, reasons: unique });
    for (const r of unique) {
      if (r.startsWith("mode:")) continue;
      const names = firedBy.get(r) ?? [];
      names.push(skill.name);
      firedBy.set(r, names);
    }
  }
  all.sort((a, b) => b.priority - a.priority || compareCodePoints(a.name, b.name));

  const ties: string[][] = [];
  for (let i = 0; i < all.length; ) {
    let j = i + 1;
    while (j < all.length && all[j]?.priority === all[i]?.priority) j++;
    if (j - i > 1) ties.push(all.slice(i, j).map((m) => m.name));
    i = j;
  }

  const overlaps: SkillSelection["overlaps"] = [];
  for (const [on, names] of firedBy) {
    const sorted = [...new Set(names)].sort(compareCodePoints);
    for (let i = 0; i < sorted.length; i++) {
      for (let j = i + 1; j < sorted.length; j++) {
        overlaps.push({ a: sorted[i] as string, b: sorted[j] as string, on });
      }
    }
  }
  overlaps.sort(
    (x, y) =>
      compareCodePoints(x.a, y.a) || compareCodePoints(x.b, y.b) || compareCodePoints(x.on, y.on),
  );

  const matched = all.slice(0, cap);
  return {
    matched,
    abstained: matched.length === 0,
    capped: all.slice(cap).map((m) => m.name),
    ties,
    overlaps,
  };
}

// ---------------------------------------------------------------------------------------
// catalog and source

/** One catalog line: `name — description` (whitespace collapsed to one line). */
export function skillCatalogLine(skill: Pick<Skill, "name" | "description">): string {
  return `${skill.name} — ${collapseWs(skill.description)}`;
}

/**
 * The compact catalog (progressive disclosure): one `name — description` line per skill,
 * in catalog order, joined by `\n`; `""` when there are no skills.
 */
export function skillCatalogText(catalog: SkillCatalog): string {
  return catalog.skills.map(skillCatalogLine).join("\n");
}

/** `skill:NAME@SHA` — the manifest's skill id + version. */
export function skillSourceRef(skill: Pick<Skill, "name" | "sha256">): string {
  return `skill:${skill.name}@${skill.sha256}`;
}

/**
 * A source over a loaded catalog. Kind `skill_catalog`: one item per skill (text = the
 * catalog line, rank = name order). Kind `skills`: the bodies of the skills selected for
 * `query.text`/`query.mode` (text `[skill NAME]\nBODY`, or the catalog line when the body
 * is empty; rank = selection order); no match → `[]` (abstain). Item ids are skill names,
 * category `skill`, sourceRef `skill:NAME@SHA`.
 */
export function skillsSource(
  catalog: SkillCatalog,
  id = "skills",
  options: { cap?: number } = {},
): ContextSource {
  if (typeof id !== "string" || isBlank(id)) {
    throw new InvalidInputError("source id must not be blank", "id");
  }
  const byName = new Map(catalog.skills.map((s) => [s.name, s]));
  return {
    id,
    supports: (kind) => kind === "skill_catalog" || kind === "skills",
    fetch(slot, query): SourceItem[] {
      if (slot.kind === "skill_catalog") {
        return catalog.skills.map((s, rank) => ({
          id: s.name,
          text: skillCatalogLine(s),
          category: "skill",
          rank,
          sourceRef: skillSourceRef(s),
        }));
      }
      if (slot.kind !== "skills") return [];
      const selection = selectSkills(catalog, { text: query.text, mode: query.mode }, options);
      return selection.matched.map((m, rank) => {
        const s = byName.get(m.name) as Skill;
        return {
          id: s.name,
          text: isBlank(s.body) ? skillCatalogLine(s) : `[skill ${s.name}]\n${s.body}`,
          category: "skill",
          rank,
          sourceRef: skillSourceRef(s),
        };
      });
    },
  };
}
