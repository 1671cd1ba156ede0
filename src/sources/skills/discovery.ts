/**
 * Skill discovery (docs/sources.md): finds `<root>/<name>/SKILL.md` under ordered roots, reads each
 * file within the size and UTF-8 rules, parses it, and resolves name clashes (earlier root
 * wins) into a deterministic catalog.
 */
import { join, resolve } from "node:path";
import { InvalidInputError } from "../../errors/index.js";
import {
  confinedRoots,
  entryInside,
  listConfined,
  PATH_REFUSED,
  REFUSED,
  type Roots,
  readConfined,
} from "../../files/index.js";
import { compareCodePoints } from "../../text/index.js";
import {
  type InvalidSkill,
  MAX_SKILL_FILE_BYTES,
  type Skill,
  type SkillCatalog,
  type SkillRoots,
} from "./model.js";
import { isInvalidSkill, parseSkill } from "./parse.js";

/** The one reason of a refused path (missing and outside alike). */
const REFUSED_REASON = `${PATH_REFUSED}: ${REFUSED}`;

/** A skill file's text, a reason it is invalid, or null when there is no skill here. */
async function readSkillFile(
  file: string,
  allowed: Roots,
): Promise<{ text: string } | { reason: string } | null> {
  const read = await readConfined(file, allowed, { maxBytes: MAX_SKILL_FILE_BYTES });
  if (!read.ok) {
    if (read.why === "not_a_file") return { reason: "SKILL.md is not a regular file" };
    if (read.why === "too_large") {
      return { reason: `SKILL.md is ${read.size} bytes, the limit is ${MAX_SKILL_FILE_BYTES}` };
    }
    // Nothing by that name in a confined directory: not a skill directory. Anything else
    // (dangling, outside, looping) is one refusal, never parsed, whatever its target.
    return (await entryInside(file, allowed)) ? { reason: REFUSED_REASON } : null;
  }
  try {
    // ignoreBOM keeps a BOM in the text, so the hash of the text is the hash of the bytes.
    return { text: new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(read.bytes) };
  } catch {
    return { reason: "SKILL.md is not valid UTF-8" };
  }
}

/**
 * Discovers `<root>/<name>/SKILL.md` one level deep under each root, in root order.
 * A missing root is fine; non-directories and directories without SKILL.md are ignored;
 * entries are visited in code-point order, so the catalog is deterministic. Every root,
 * directory and SKILL.md is read through the one confinement rule (files/confine.ts)
 * inside `allowed` (default: the roots themselves): a SKILL.md that is missing, dangling
 * or leads out of them is one `path_refused` reason, its target never read nor parsed.
 *
 * @example await discoverSkills({ roots: [".promptctx/skills", ".agents/skills", ".claude/skills"] })
 */
export async function discoverSkills(options: SkillRoots): Promise<SkillCatalog> {
  if (!Array.isArray(options?.roots) || options.roots.some((r) => typeof r !== "string")) {
    throw new InvalidInputError("roots must be a list of paths", "roots");
  }
  const given = options.allowed;
  if (given !== undefined && (!Array.isArray(given) || given.some((r) => typeof r !== "string"))) {
    throw new InvalidInputError("allowed must be a list of paths", "allowed");
  }
  const byName = new Map<string, Skill>();
  const invalid: InvalidSkill[] = [];
  const shadowed: SkillCatalog["shadowed"] = [];
  const seenRoots = new Set<string>();
  const allowed = await confinedRoots(options.allowed ?? options.roots);
  for (const root of options.roots) {
    const key = resolve(root);
    if (seenRoots.has(key)) continue;
    seenRoots.add(key);
    const list = await listConfined(root, allowed);
    if (!list.ok) {
      if (await entryInside(root, allowed)) invalid.push({ path: root, reason: REFUSED_REASON });
      continue;
    }
    for (const dirName of list.names.sort(compareCodePoints)) {
      const file = join(root, dirName, "SKILL.md");
      const read = await readSkillFile(file, allowed);
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
