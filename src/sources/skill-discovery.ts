/**
 * Skill discovery (docs/sources.md): finds `<root>/<name>/SKILL.md` under ordered roots, reads each
 * file within the size and UTF-8 rules, parses it, and resolves name clashes (earlier root
 * wins) into a deterministic catalog.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { InvalidInputError, nodeErrorCode } from "../errors/index.js";
import { compareCodePoints } from "../text/index.js";
import { isInvalidSkill, parseSkill } from "./skill-parse.js";
import {
  type InvalidSkill,
  MAX_SKILL_FILE_BYTES,
  type Skill,
  type SkillCatalog,
  type SkillRoots,
} from "./skills.js";

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
    const code = nodeErrorCode(err, "error");
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
    return { reason: `cannot read SKILL.md: ${nodeErrorCode(err, "error")}` };
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
      const code = nodeErrorCode(err, "error");
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
