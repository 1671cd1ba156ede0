/**
 * The project instruction-file chain of docs/sources.md (AGENTS.md / CLAUDE.md): user-level files,
 * then every directory from the stop directory down to the working directory, each file
 * followed by the files it `@imports`. I/O happens here, at the edge, but the result is a
 * pure function of the filesystem: every path is a parameter (never the process working
 * directory or home), files are visited in a fixed order, and nothing is read twice.
 * The walk itself is in `walk.ts`, its parts and issues in
 * `parts.ts`, option validation in
 * `options.ts`, code masking and import parsing in `text/markdown.ts`.
 *
 * Choices (documented once, relied on by tests):
 *
 * - **Order.** `userFiles` in the given order (farthest first), then the directories from
 *   `stopDir` down to `cwd`; in each directory the configured `fileNames` in order. When
 *   `AGENTS.md` is configured and a directory holds an entry named `AGENTS.override.md`
 *   (any entry, even a broken link, which is then reported), the override takes
 *   `AGENTS.md`'s place and `AGENTS.md` is not read. Missing files are skipped silently.
 * - **Imports.** A token is an import when it starts with `@` at the start of a line or
 *   after whitespace, outside inline code spans and fenced code blocks (``` or ~~~), and
 *   the rest (up to the next whitespace, minus trailing `.,;:!?)]}>"'`) looks like a
 *   file path: it starts with `~/`, contains a `/`, or ends in an extension (`.md`,
 *   `.txt`, …). So `@docs/style.md`, `@./x.md` and `@~/notes.md` are imports, while
 *   `@alice`, `user@host.com` and `` `@x.md` `` are not. Paths resolve against the
 *   directory of the importing file as it was reached (its lexical path, not its real
 *   path); `@~/` resolves against `home` (without it: `unresolved_import`). An imported
 *   file becomes its own part right after its importer's part (depth-first, imports in
 *   order of appearance), so `A` importing `B` and `D`, with `B` importing `C`, gives
 *   `A, B, C, D`. The importing file's text is kept as written (the `@` line stays).
 *   Only the kept content of a truncated file is scanned for imports.
 * - **Depth.** Chain files have depth 0; a file imported by a depth-`d` file has depth
 *   `d + 1`. Depth `maxImportDepth` is included; one more is reported `depth_exceeded`
 *   without touching the file.
 * - **Identity.** Files are identified by real path. A file whose real path is on the
 *   current import stack is a `cycle` (not followed); one already included elsewhere is a
 *   `duplicate` (skipped, the first occurrence wins).
 * - **Caps.** `bytes` is the UTF-8 size of the kept `content` (a leading BOM is dropped);
 *   `sha256` is the first 16 hex digits of the SHA-256 of the whole file's bytes (so it
 *   names the file version even when the content was cut). A file over `maxFileBytes` is
 *   cut at the last UTF-8 character boundary at or before the cap (`truncated`, plus a
 *   `file_cap` issue when the part is kept). The total cap is applied once the whole chain
 *   is known, so the **nearest files win**: chain files with their imports are taken
 *   from the nearest (last) to the farthest (user files first to go), each with its
 *   imports in chain order (the importer first); the part that crosses the cap is cut the
 *   same way to the room left (dropped when none is left) and every farther part is
 *   dropped; each gets a `total_cap` issue. The walk's issues come in the order met, the
 *   cap issues after them in chain order.
 * - **Confinement.** Every file is read through the one confinement rule
 *   (files/confine.ts): only inside the walk's root (`stopDir`, the workspace) and the
 *   user-level roots (`userRoots`, by default the directories of the configured
 *   `userFiles`, as given and resolved, and each file's real directory), both as written
 *   and with symlinks resolved, and checked again on the opened file. A file that is
 *   missing, dangling, looping, or leads out (`@../../etc/passwd`, an absolute path,
 *   `@~/…` outside the roots, a link to a file or through a directory outside) is one and
 *   the same `path_refused` issue with the same detail, whether or not its target exists:
 *   for an import always, for a chain or user file when an entry by that name exists in a
 *   confined directory (no entry at all is skipped silently). Without `stopDir` and
 *   without a git root the walk's root is the filesystem root: pass `stopDir` to confine.
 * - **Failures** are issues, never errors: `path_refused` (above), `unreadable` (invalid
 *   UTF-8), `not_a_file` (a directory or device by that name inside the roots). Symlink
 *   loops fail at once (the OS reports ELOOP), so nothing hangs. Only invalid options
 *   throw ({@link InvalidInputError}).
 * - **Paths.** `path` in parts and issues is relative to `stopDir` (with `/`) when the
 *   file lies inside it, else absolute; `absolutePath` is always absolute.
 * - **Text.** Each part is rendered as `<!-- file: PATH -->` (or
 *   `<!-- file: PATH (truncated) -->`) on its own line followed by the content, ending
 *   in a newline; parts are separated by one blank line.
 */
import { join, resolve } from "node:path";
import { InvalidInputError } from "../../errors/index.js";
import { entryInside } from "../../files/index.js";
import { isBlank } from "../../text/index.js";
import type { ContextSource, SourceItem, SourceQuery } from "../types.js";
import { applyTotalCap } from "./cap.js";
import { type InstructionChainOptions, resolveOptions } from "./options.js";
import type { InstructionChain, InstructionPart } from "./parts.js";
import { allowedRoots, chainDirs, Walker } from "./walk.js";

/** The file that replaces `AGENTS.md` in the same directory when present. */
export const AGENTS_OVERRIDE_FILE = "AGENTS.override.md";

function headerPath(p: string): string {
  // Keep the header one well-formed comment line whatever the file name holds.
  return p.replace(/[\u0000-\u001f\u007f]/g, "?").replaceAll("-->", "--&gt;");
}

/** The chain's `text`: each part under a `<!-- file: PATH -->` line, blank-line separated. */
export function renderInstructionChain(parts: readonly InstructionPart[]): string {
  return parts
    .map((p) => {
      const head = `<!-- file: ${headerPath(p.path)}${p.truncated ? " (truncated)" : ""} -->\n`;
      const body = p.content === "" || p.content.endsWith("\n") ? p.content : `${p.content}\n`;
      return head + body;
    })
    .join("\n");
}

/**
 * Loads the instruction-file chain (docs/sources.md). Never fails on file problems (they become
 * `issues`); throws {@link InvalidInputError} on invalid options, and the signal's reason
 * when `signal` aborts.
 *
 * @example
 * const chain = await loadInstructionChain({ cwd: "/repo/pkg", stopDir: "/repo" });
 * chain.parts.map((p) => p.path) // ["AGENTS.md", "pkg/AGENTS.md"]
 */
export async function loadInstructionChain(
  options: InstructionChainOptions,
  signal?: AbortSignal,
): Promise<InstructionChain> {
  const o = resolveOptions(options);
  signal?.throwIfAborted();
  const dirs = await chainDirs(o.cwd, o.stopDir);
  const root = dirs[0] as string;
  const roots = await allowedRoots(root, o.userFiles, o.userRoots);
  const walker = new Walker(o, root, roots, signal);
  const top = { depth: 0, importedFrom: null, stack: [], isImport: false } as const;
  for (const abs of o.userFiles) await walker.visit({ ...top, abs });
  for (const dir of dirs) {
    for (const name of o.fileNames) {
      let abs = join(dir, name);
      if (name === "AGENTS.md" && (await entryInside(join(dir, AGENTS_OVERRIDE_FILE), roots))) {
        abs = join(dir, AGENTS_OVERRIDE_FILE);
      }
      await walker.visit({ ...top, abs });
    }
  }
  const capped = applyTotalCap(walker.parts, walker.fileCaps, o.maxTotalBytes);
  const parts = capped.parts;
  return {
    parts,
    issues: [...walker.issues, ...capped.issues],
    text: renderInstructionChain(parts),
    totalBytes: parts.reduce((n, p) => n + p.bytes, 0),
  };
}

/**
 * The chain as a source of kind `instructions`, loaded at each fetch: one item per part
 * with non-blank content, in chain order — id = the part's `path`, text = its content,
 * `sourceRef` = `PATH#SHA256`, `rank` = position, category `user`/`project`/`import`
 * (user file, directory file, imported file), tag `truncated` when cut. Issues are not
 * items; read them with {@link loadInstructionChain}. Options are validated when built.
 *
 * @example instructionsSource({ cwd: "/repo/pkg", stopDir: "/repo" })
 */
export function instructionsSource(
  options: InstructionChainOptions,
  id = "instructions",
): ContextSource {
  if (typeof id !== "string" || isBlank(id)) {
    throw new InvalidInputError("source id must not be blank", "id");
  }
  resolveOptions(options);
  const frozen: InstructionChainOptions = {
    ...options,
    userFiles: options.userFiles === undefined ? undefined : [...options.userFiles],
    userRoots: options.userRoots === undefined ? undefined : [...options.userRoots],
    fileNames: options.fileNames === undefined ? undefined : [...options.fileNames],
  };
  const userFiles = new Set((frozen.userFiles ?? []).map((p) => resolve(p)));
  // The chain each assembly loaded, keyed by its query object, for that assembly's report.
  const loaded = new WeakMap<SourceQuery, InstructionChain>();
  return {
    id,
    supports: (kind) => kind === "instructions",
    fetch: async (slot, query, signal) => {
      if (slot.kind !== "instructions") return [];
      const chain = await loadInstructionChain(frozen, signal);
      loaded.set(query, chain);
      return instructionItems(chain, userFiles);
    },
    report: (slot, query) => {
      const chain = loaded.get(query);
      return slot.kind === "instructions" && chain !== undefined
        ? { instructions: { slot: slot.kind, issues: [...chain.issues] } }
        : null;
    },
  };
}

/**
 * The items of an already-loaded chain (see {@link instructionsSource} for their shape);
 * `userFiles` are the absolute paths of user-level files.
 */
export function instructionItems(
  chain: InstructionChain,
  userFiles: ReadonlySet<string> = new Set(),
): SourceItem[] {
  const items: SourceItem[] = [];
  for (const part of chain.parts) {
    if (isBlank(part.content)) continue;
    const item: SourceItem = {
      id: part.path,
      text: part.content,
      sourceRef: `${part.path}#${part.sha256}`,
      rank: items.length,
      category:
        part.importedFrom !== null
          ? "import"
          : userFiles.has(part.absolutePath)
            ? "user"
            : "project",
    };
    if (part.truncated) item.tags = ["truncated"];
    items.push(item);
  }
  return items;
}

/**
 * A source over a chain loaded once (e.g. a workspace assembly that also reports the
 * chain's issues), so the files are not read twice.
 *
 * @example instructionChainSource(await loadInstructionChain(options))
 */
export function instructionChainSource(
  chain: InstructionChain,
  userFiles: readonly string[] = [],
  id = "instructions",
): ContextSource {
  const items = instructionItems(chain, new Set(userFiles.map((p) => resolve(p))));
  return {
    id,
    supports: (kind) => kind === "instructions",
    fetch: (slot) => (slot.kind === "instructions" ? items.map((i) => ({ ...i })) : []),
    report: (slot) =>
      slot.kind === "instructions"
        ? { instructions: { slot: slot.kind, issues: [...chain.issues] } }
        : null,
  };
}
