/**
 * What the MCP resources hold, as plain functions of the session's context: the
 * workspace's instruction files (`instructions:///PATH`, read through the one confinement
 * rule of files/), the scope's memories (`memory://ID`) and the scope's last manifest
 * (`manifest://last`). Whatever is missing, outside the root or another scope's is the
 * same `null`: a client learns nothing from the difference.
 */
import { join } from "node:path";
import { confinedRoots, readConfined } from "../../files/index.js";
import type { MemoryRecord } from "../../store/index.js";
import { readWorkspaceFiles } from "../../workspace/index.js";
import type { LastManifest, McpContext } from "./context.js";

/** The URI of the last-manifest resource. */
export const MANIFEST_URI = "manifest://last";
/** The URI template of a memory, and of an instruction file. */
export const MEMORY_TEMPLATE = "memory://{memoryId}";
export const INSTRUCTIONS_TEMPLATE = "instructions:///{+path}";
/** The most memories `resources/list` names (the first ones in the store's list order). */
export const MAX_LISTED_MEMORIES = 1000;
/** The largest instruction file served, in bytes. */
export const MAX_INSTRUCTION_BYTES = 1024 * 1024;

/**
 * The URI of a memory: its id, percent-encoded.
 *
 * @example memoryUri("mem 1/a") // "memory://mem%201%2Fa"
 */
export function memoryUri(memoryId: string): string {
  return `memory://${encodeURIComponent(memoryId)}`;
}

/**
 * The URI of an instruction file (a path relative to the root, `/`-separated).
 *
 * @example instructionUri("docs/AGENTS.md") // "instructions:///docs/AGENTS.md"
 */
export function instructionUri(path: string): string {
  return `instructions:///${path.split("/").map(encodeURIComponent).join("/")}`;
}

/**
 * A URI variable decoded, or null when it is not valid percent-encoding.
 *
 * @example decoded("a%20b") // "a b"
 */
export function decoded(value: string | string[] | undefined): string | null {
  if (typeof value !== "string" || value === "") return null;
  try {
    return decodeURIComponent(value);
  } catch {
    return null;
  }
}

/** An instruction file of the workspace's chain, as resources list it. */
export interface InstructionFile {
  path: string;
  bytes: number;
  sha256: string;
}

/**
 * The instruction files of the root's chain that lie inside the root (user-level files
 * are not the workspace's), as read now.
 *
 * @example (await instructionFiles(ctx)).map((f) => f.path) // ["AGENTS.md"]
 */
export async function instructionFiles(ctx: McpContext): Promise<InstructionFile[]> {
  const files = await readWorkspaceFiles(ctx.root, {});
  return files.instructions.parts
    .filter((p) => !p.path.startsWith("/"))
    .map((p) => ({ path: p.path, bytes: p.bytes, sha256: p.sha256 }));
}

/**
 * The text of an instruction file of the chain, read through the confinement of
 * files/ (a link out of the root is refused), or null.
 *
 * @example await readInstructionFile(ctx, "AGENTS.md")
 */
export async function readInstructionFile(ctx: McpContext, path: string): Promise<string | null> {
  const listed = await instructionFiles(ctx);
  if (!listed.some((f) => f.path === path)) return null;
  const read = await readConfined(join(ctx.root, path), await confinedRoots([ctx.root]), {
    maxBytes: MAX_INSTRUCTION_BYTES,
  });
  return read.ok ? read.bytes.toString("utf8").replace(/^\uFEFF/, "") : null;
}

/**
 * The scope's memories (at most {@link MAX_LISTED_MEMORIES}, by id), or none without a store.
 *
 * @example (await listedMemories(ctx)).length
 */
export async function listedMemories(ctx: McpContext): Promise<MemoryRecord[]> {
  const store = ctx.store();
  if (store === null) return [];
  const records = await store.list({ userScope: ctx.scope });
  return records.slice(0, MAX_LISTED_MEMORIES);
}

/**
 * One memory of the session's scope, or null (missing, or another scope's: the same).
 *
 * @example await readMemory(ctx, "m1") // null when ctx.scope has no m1
 */
export async function readMemory(ctx: McpContext, memoryId: string): Promise<MemoryRecord | null> {
  const store = ctx.store();
  if (store === null) return null;
  return store.get(memoryId, { userScope: ctx.scope });
}

/**
 * The scope's last manifest, or null before its first assembly.
 *
 * @example lastManifest(ctx)?.manifest.layers
 */
export function lastManifest(ctx: McpContext): LastManifest | null {
  return ctx.manifests.get(ctx.scope);
}
