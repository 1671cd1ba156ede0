/**
 * Skill trigger evaluation (docs/sources.md): which skills a query and mode fire (keywords as whole
 * words, patterns on a bounded prefix, modes), and the deterministic selection — priority
 * desc → name asc, capped — with ties, overlaps and the cap reported.
 */
import { InvalidInputError } from "../../errors/index.js";
import {
  compareCodePoints,
  compileUserPattern,
  cpAt,
  cpBefore,
  cpPrefix,
  needsWordBoundary,
  normalizeKey,
  type UserPattern,
  WORD_CHAR,
} from "../../text/index.js";
import {
  DEFAULT_SKILL_CAP,
  MAX_SKILL_PATTERN_LENGTH,
  SKILL_QUERY_GUARD,
  type SkillCatalog,
  type SkillMatch,
  type SkillSelection,
} from "./model.js";

/** Whole-word occurrence of an already-normalized keyword in an already-normalized text. */
function containsWord(text: string, keyword: string): boolean {
  if (keyword === "") return false;
  const checkStart = needsWordBoundary(cpAt(keyword, 0));
  const checkEnd = needsWordBoundary(cpBefore(keyword, keyword.length));
  for (let i = text.indexOf(keyword); i >= 0; i = text.indexOf(keyword, i + 1)) {
    if (
      (!checkStart || !WORD_CHAR.test(cpBefore(text, i))) &&
      (!checkEnd || !WORD_CHAR.test(cpAt(text, i + keyword.length)))
    ) {
      return true;
    }
  }
  return false;
}

/**
 * Every trigger pattern of the catalog compiled for the linear-time engine. A pattern that
 * does not compile is refused with its field path (fails closed) — possible only for a
 * hand-built catalog: `parseSkill` already makes such a skill invalid.
 */
function compilePatterns(catalog: SkillCatalog): Map<string, UserPattern> {
  const out = new Map<string, UserPattern>();
  catalog.skills.forEach((skill, i) => {
    (skill.triggers.patterns ?? []).forEach((p, j) => {
      if (!out.has(p))
        out.set(p, checkedPattern(p, ["catalog", "skills", i, "triggers", "patterns", j]));
    });
  });
  return out;
}

/** Most distinct patterns remembered by {@link checkedPattern} before it starts over. */
const MAX_CHECKED_PATTERNS = 1024;
/**
 * Pattern text → its compiled form. A function of the text alone, so one memo per process
 * is right: a served workspace selects skills on every request, and compiling costs far
 * more than a test. Refusals are not remembered (their error names the field path).
 */
const CHECKED = new Map<string, UserPattern>();

function checkedPattern(p: string, path: ReadonlyArray<string | number>): UserPattern {
  let c = CHECKED.get(p);
  if (c === undefined) {
    c = compileUserPattern(p, path, { maxLength: MAX_SKILL_PATTERN_LENGTH });
    if (CHECKED.size >= MAX_CHECKED_PATTERNS) CHECKED.clear();
    CHECKED.set(p, c);
  }
  return c;
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
  const compiled = compilePatterns(catalog);
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
      if ((compiled.get(p) as UserPattern).engine.test(guarded)) reasons.push(patternReason(p));
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
