/**
 * Parsing and validation of one SKILL.md (docs/sources.md): `---` frontmatter split from the body,
 * YAML read with the core schema, every field checked with a reason that names it. The
 * rules are listed in `model.ts`.
 */
import { parseDocument } from "yaml";
import { shortHash } from "../../cache/index.js";
import { PromptctxError } from "../../errors/index.js";
import {
  collapseWs,
  compareCodePoints,
  compileUserPattern,
  cpLength,
  isBlank,
  normalizeKey,
  trimWs,
} from "../../text/index.js";
import {
  type InvalidSkill,
  MAX_SKILL_PATTERN_LENGTH,
  type RedLine,
  type Skill,
  type SkillTriggers,
} from "./model.js";

const NAME_RE = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const SEVERITIES = ["block", "warn", "review"] as const;

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

/**
 * Compiles a pattern for the linear-time engine (`compileUserPattern`: length, syntax,
 * what RE2 cannot run; a red line must not match the empty string), or fails with the
 * reason, which names the field and the pattern.
 */
function checkPattern(source: string, where: string, refuseEmptyMatch = false): string {
  try {
    compileUserPattern(source, where, { maxLength: MAX_SKILL_PATTERN_LENGTH, refuseEmptyMatch });
  } catch (err) {
    if (err instanceof PromptctxError) fail(`${where}: ${err.message}`);
    throw err;
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
      line.pattern = checkPattern(pattern, `${where}.pattern`, true);
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
