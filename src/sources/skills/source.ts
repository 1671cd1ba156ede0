/**
 * The skill catalog and the `skill_catalog` / `skills` source (docs/sources.md): the compact
 * `name — description` catalog for progressive disclosure, and the bodies of the skills
 * selected for a query.
 */
import { basename, dirname, isAbsolute, relative, sep } from "node:path";
import { InvalidInputError } from "../../errors/index.js";
import { collapseWs, isBlank } from "../../text/index.js";
import type { ContextSource, SourceItem, SourceQuery } from "../types.js";
import {
  DEFAULT_SKILL_CAP,
  type Skill,
  type SkillCatalog,
  type SkillReport,
  type SkillSelection,
} from "./model.js";
import { selectSkills } from "./select.js";

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

/** Options of {@link skillsSource}. */
export interface SkillsSourceOptions {
  /** Matched skills whose bodies enter (default 3). */
  cap?: number;
  /** Paths in the report are written relative to this directory when inside it (`/` separated). */
  root?: string;
}

function displayPath(path: string, root: string | undefined): string {
  if (root === undefined) return path;
  const rel = relative(root, path);
  if (rel === "" || rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return path;
  return rel.split(sep).join("/");
}

/**
 * The manifest's skill report for one selection (docs/sources.md): matched skills with their
 * trigger reasons and version, the cap, what fell over it, ties, overlaps, the invalid
 * skills (named by their directory) with their reason, the shadowed ones, and `abstained`.
 *
 * @example skillReport(catalog, selectSkills(catalog, query), {}).abstained // true when nothing matched
 */
export function skillReport(
  catalog: SkillCatalog,
  selection: SkillSelection,
  options: SkillsSourceOptions = {},
  slot = "skills",
): SkillReport {
  const byName = new Map(catalog.skills.map((s) => [s.name, s]));
  return {
    slot,
    matched: selection.matched.map((m) => ({
      name: m.name,
      priority: m.priority,
      reasons: [...m.reasons],
      version: byName.get(m.name)?.sha256 ?? "",
    })),
    abstained: selection.abstained,
    cap: options.cap ?? DEFAULT_SKILL_CAP,
    capped: [...selection.capped],
    ties: selection.ties.map((t) => [...t]),
    overlaps: selection.overlaps.map((o) => ({ ...o })),
    invalid: catalog.invalid.map((i) => ({
      name: basename(dirname(i.path)),
      path: displayPath(i.path, options.root),
      reason: i.reason,
    })),
    shadowed: catalog.shadowed.map((x) => ({
      name: x.name,
      path: displayPath(x.path, options.root),
      by: displayPath(x.by, options.root),
    })),
  };
}

/**
 * A source over a loaded catalog. Kind `skill_catalog`: one item per skill (text = the
 * catalog line, rank = name order). Kind `skills`: the bodies of the skills selected for
 * `query.text`/`query.mode` (text `[skill NAME]\nBODY`, or the catalog line when the body
 * is empty; rank = selection order); no match → `[]` (abstain). Item ids are skill names,
 * category `skill`, sourceRef `skill:NAME@SHA`. Its `report` for the `skills` slot is the
 * {@link skillReport} of that selection, so the manifest says which skills triggered and
 * why, or that the selection abstained.
 */
export function skillsSource(
  catalog: SkillCatalog,
  id = "skills",
  options: SkillsSourceOptions = {},
): ContextSource {
  if (typeof id !== "string" || isBlank(id)) {
    throw new InvalidInputError("source id must not be blank", "id");
  }
  const byName = new Map(catalog.skills.map((s) => [s.name, s]));
  const cap = options.cap === undefined ? {} : { cap: options.cap };
  // The last selection: the report and the fetch of one assembly ask for the same query,
  // and the catalog is fixed, so the triggers run once per query, not twice.
  let last: { text: string; mode: string; selection: SkillSelection } | null = null;
  const select = (query: SourceQuery): SkillSelection => {
    if (last === null || last.text !== query.text || last.mode !== query.mode) {
      const q = { text: query.text, mode: query.mode };
      last = { ...q, selection: selectSkills(catalog, q, cap) };
    }
    return last.selection;
  };
  return {
    id,
    report(slot, query) {
      if (slot.kind !== "skills") return null;
      return { skills: skillReport(catalog, select(query), options, slot.kind) };
    },
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
      return select(query).matched.map((m, rank) => {
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
