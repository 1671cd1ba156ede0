/**
 * Skill trigger evaluation (docs/sources.md): which skills a query and mode fire (keywords as whole
 * words, patterns on a bounded prefix, modes), and the deterministic selection — priority
 * desc → name asc, capped — with ties, overlaps and the cap reported.
 */
import { InvalidInputError } from "../errors/index.js";
import {
  compareCodePoints,
  compileScanRegex,
  cpAt,
  cpBefore,
  cpPrefix,
  needsWordBoundary,
  normalizeKey,
  regexSafetyProblem,
  type ScanRegex,
  scanMatchStarts,
  WORD_CHAR,
} from "../text/index.js";
import {
  DEFAULT_SKILL_CAP,
  SKILL_QUERY_GUARD,
  type SkillCatalog,
  type SkillMatch,
  type SkillSelection,
} from "./skills.js";

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

/** Why a trigger pattern cannot run (syntax, the static safety check, the exact scan), or null. */
function patternProblem(p: string): string | null {
  try {
    new RegExp(p, "u");
  } catch (err) {
    return `invalid regex /${p}/u: ${(err as Error).message}`;
  }
  const unsafe = regexSafetyProblem(p);
  if (unsafe !== null) return `unsafe regex /${p}/u: ${unsafe}`;
  const scan = compileScanRegex(p);
  return typeof scan === "string" ? `regex /${p}/u: ${scan}` : null;
}

/**
 * Every trigger pattern of the catalog compiled for the exact linear-time scan. Refuses
 * (fails closed) a pattern that did not pass the load-time checks — possible only for a
 * hand-built catalog: `parseSkill` already makes such a skill invalid.
 */
function compilePatterns(catalog: SkillCatalog): Map<string, ScanRegex> {
  const out = new Map<string, ScanRegex>();
  catalog.skills.forEach((skill, i) => {
    (skill.triggers.patterns ?? []).forEach((p, j) => {
      if (out.has(p)) return;
      const compiled = checkedPattern(p);
      if (typeof compiled === "string") {
        throw new InvalidInputError(compiled, ["catalog", "skills", i, "triggers", "patterns", j]);
      }
      out.set(p, compiled);
    });
  });
  return out;
}

/** Most distinct patterns remembered by {@link checkedPattern} before it starts over. */
const MAX_CHECKED_PATTERNS = 1024;
/**
 * Pattern text → its compiled scan, or the problem that refuses it. Both are functions of
 * the text alone, so one memo per process is right: a served workspace selects skills on
 * every request, and the checks (syntax, safety, compilation) cost far more than a scan.
 */
const CHECKED = new Map<string, ScanRegex | string>();

function checkedPattern(p: string): ScanRegex | string {
  let c = CHECKED.get(p);
  if (c === undefined) {
    c = patternProblem(p) ?? (compileScanRegex(p) as ScanRegex);
    if (CHECKED.size >= MAX_CHECKED_PATTERNS) CHECKED.clear();
    CHECKED.set(p, c);
  }
  return c;
}

/**
 * Does the pattern match anywhere in the guarded query? The exact linear-time scan, so a
 * safe pattern costs one pass (a native search of 10,000 code points can be quadratic);
 * its work is bounded by the query guard times the pattern's states.
 */
function patternMatches(scan: ScanRegex, cps: Int32Array): boolean {
  const starts = scanMatchStarts(scan, cps, { left: Number.POSITIVE_INFINITY });
  return starts?.includes(1) === true;
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
  const scans = compilePatterns(catalog);
  const normalized = normalizeKey(query.text);
  const guarded = Int32Array.from(
    cpPrefix(query.text, SKILL_QUERY_GUARD),
    (c) => c.codePointAt(0) as number,
  );
  const all: SkillMatch[] = [];
  const firedBy = new Map<string, string[]>(); // keyword/pattern reason → skill names
  for (const skill of catalog.skills) {
    const reasons: string[] = [];
    const t = skill.triggers;
    for (const k of t.keywords ?? []) {
      if (containsWord(normalized, k)) reasons.push(keywordReason(k));
    }
    for (const p of t.patterns ?? []) {
      if (patternMatches(scans.get(p) as ScanRegex, guarded)) reasons.push(patternReason(p));
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
