/**
 * Options of the instruction-file chain (docs/sources.md): the public option shape, its defaults,
 * and validation into the resolved form the walk uses (absolute paths, defaults filled in).
 */
import { isAbsolute, resolve } from "node:path";
import { z } from "zod";
import { InvalidInputError, invalidFromZod } from "../../errors/index.js";
import { isInside } from "../../files/index.js";
import { isBlank, textString } from "../../text/index.js";

/** Default instruction file names, read in this order in each directory. */
export const DEFAULT_INSTRUCTION_FILE_NAMES: readonly string[] = [
  "AGENTS.md",
  "CLAUDE.md",
  "CLAUDE.local.md",
];
/** Default per-file cap in bytes (16 KiB). */
export const DEFAULT_MAX_FILE_BYTES = 16 * 1024;
/** Default total cap in bytes (32 KiB). */
export const DEFAULT_MAX_TOTAL_BYTES = 32 * 1024;
/** Default maximum import depth. */
export const DEFAULT_MAX_IMPORT_DEPTH = 4;

export interface InstructionChainOptions {
  /** Absolute directory where the walk starts (nearest, read last). */
  cwd: string;
  /**
   * Absolute directory where the walk stops (farthest, read first); `cwd` or one of its
   * ancestors. Default: the nearest ancestor-or-self of `cwd` holding a `.git` entry,
   * else the filesystem root.
   */
  stopDir?: string;
  /** Absolute user-level files, farthest first; read before the directory chain. */
  userFiles?: string[];
  /**
   * Absolute directories user-level files and their imports may be read from, besides the
   * walk's root. Default: each user file's directory (as given and resolved) and the real
   * directory of the file. `[]` confines user files to the walk's root (a replay does so).
   */
  userRoots?: string[];
  /** Absolute home directory for `@~/…` imports; without it they are unresolved. */
  home?: string;
  /** File names per directory, in order. Default `AGENTS.md`, `CLAUDE.md`, `CLAUDE.local.md`. */
  fileNames?: string[];
  /** Per-file cap on kept content bytes. Default 16 KiB. */
  maxFileBytes?: number;
  /** Cap on the total kept content bytes. Default 32 KiB. */
  maxTotalBytes?: number;
  /** Deepest import level included. Default 4. */
  maxImportDepth?: number;
}

const absolutePath = textString.refine((p) => p.length > 0 && isAbsolute(p), {
  message: "must be an absolute path",
});
const byteCount = z.number().int().min(0);
const fileName = textString.refine(
  (n) => !isBlank(n) && !n.includes("/") && !n.includes("\\") && n !== "." && n !== "..",
  {
    message: "must be a plain file name",
  },
);

const OptionsSchema = z.object({
  cwd: absolutePath,
  stopDir: absolutePath.optional(),
  userFiles: z.array(absolutePath).optional(),
  userRoots: z.array(absolutePath).optional(),
  home: absolutePath.optional(),
  fileNames: z.array(fileName).optional(),
  maxFileBytes: byteCount.optional(),
  maxTotalBytes: byteCount.optional(),
  maxImportDepth: byteCount.optional(),
});

/** Validated options with defaults filled in and paths resolved. */
export interface Resolved {
  cwd: string;
  stopDir: string | null;
  userFiles: string[];
  userRoots: string[] | null;
  home: string | null;
  fileNames: string[];
  maxFileBytes: number;
  maxTotalBytes: number;
  maxImportDepth: number;
}

/** Validates options (throws {@link InvalidInputError} naming the field) and fills defaults. */
export function resolveOptions(options: InstructionChainOptions): Resolved {
  const r = OptionsSchema.safeParse(options);
  if (!r.success) throw invalidFromZod(r.error, ["options"]);
  const o = r.data;
  const fileNames = o.fileNames ?? [...DEFAULT_INSTRUCTION_FILE_NAMES];
  const seen = new Set<string>();
  fileNames.forEach((n, i) => {
    if (seen.has(n)) {
      throw new InvalidInputError(`duplicate file name "${n}"`, ["options", "fileNames", i]);
    }
    seen.add(n);
  });
  const cwd = resolve(o.cwd);
  const stopDir = o.stopDir === undefined ? null : resolve(o.stopDir);
  if (stopDir !== null && !isInside(stopDir, cwd)) {
    throw new InvalidInputError("stopDir must be cwd or one of its ancestors", [
      "options",
      "stopDir",
    ]);
  }
  return {
    cwd,
    stopDir,
    userFiles: (o.userFiles ?? []).map((p) => resolve(p)),
    userRoots: o.userRoots === undefined ? null : o.userRoots.map((p) => resolve(p)),
    home: o.home === undefined ? null : resolve(o.home),
    fileNames,
    maxFileBytes: o.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
    maxTotalBytes: o.maxTotalBytes ?? DEFAULT_MAX_TOTAL_BYTES,
    maxImportDepth: o.maxImportDepth ?? DEFAULT_MAX_IMPORT_DEPTH,
  };
}
