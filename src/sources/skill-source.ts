/**
 * The skill catalog and the `skill_catalog` / `skills` source (spec 06): the compact
 * `name — description` catalog for progressive disclosure, and the bodies of the skills
 * selected for a query.
 */
import { InvalidInputError } from "../errors/index.js";
import { collapseWs, isBlank } from "../text/index.js";
import { selectSkills } from "./skill-select.js";
import type { Skill, SkillCatalog } from "./skills.js";
import type { ContextSource, SourceItem } from "./types.js";

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
