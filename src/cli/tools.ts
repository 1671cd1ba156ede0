/**
 * Built-in tools of `promptctx chat`: `read_file(path)`, `list_files(dir)`,
 * `write_file(path, content)` and `run(command)`, executed on the model's request.
 *
 * Rules (documented so peers can mirror them):
 * - Only tools named in the workspace config (`tools`) can run; the model is offered
 *   exactly those. A configured tool without a built-in implementation, an unknown tool,
 *   or a bad argument is an error result (`ok: false`), never a crash of the loop.
 * - Paths are confined to the workspace: a path is resolved against the workspace's real
 *   path (absolute paths are accepted when inside it), and rejected when it lands outside
 *   (`..`), or when the path — or, for a file not yet written, its deepest existing
 *   ancestor — resolves through a symlink to a place outside. A dangling symlink is
 *   rejected too (writing through it would create its target anywhere). That check names
 *   the reason for the model; the access itself then goes through the package's one
 *   confinement rule (`readConfined`, `listConfined`, `writeConfined`): the opened
 *   descriptor is verified, so a link swapped in between check and access is refused,
 *   and nothing outside the workspace is read, created or written.
 * - `read_file` returns at most {@link READ_LIMIT_BYTES} bytes (UTF-8, a note says when
 *   it cut); `list_files` lists one directory (not recursive), names sorted by code
 *   point, directories with a trailing `/`, at most {@link LIST_LIMIT} entries;
 *   `write_file` creates missing parent directories inside the workspace and overwrites.
 * - `run` needs `allowRun` (`--allow-run`), else the error "run needs approval
 *   (--allow-run)". It runs `sh -c COMMAND` in the workspace root with a timeout
 *   ({@link RUN_TIMEOUT_MS}), the provider API keys removed from its environment, and
 *   returns the exit status and up to {@link RUN_OUTPUT_LIMIT} bytes of each output
 *   stream; a non-zero exit is a failed call.
 * - Every outcome carries a one-line `summary` (≤ {@link SUMMARY_LIMIT} chars) for the
 *   tool-state layer (`read_file → ok: AGENTS.md (312 bytes)`).
 */
import { spawn } from "node:child_process";
import { lstat, realpath, stat } from "node:fs/promises";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import { nodeErrorCode } from "../errors/index.js";
import { confinedRoots, listConfined, readConfined, writeConfined } from "../files/index.js";
import type { ToolSpec } from "../sources/index.js";
import { compareCodePoints } from "../text/index.js";

/** Tools with a built-in implementation. */
export const BUILTIN_TOOLS = ["read_file", "list_files", "write_file", "run"] as const;
export type BuiltinTool = (typeof BUILTIN_TOOLS)[number];

/** Arguments the built-ins understand (all strings), offered to the model with these descriptions. */
export const BUILTIN_ARGS: Readonly<Record<BuiltinTool, Readonly<Record<string, string>>>> = {
  read_file: { path: "file path relative to the workspace root" },
  list_files: { dir: "directory relative to the workspace root (default: the root)" },
  write_file: {
    path: "file path relative to the workspace root",
    content: "the full new content of the file",
  },
  run: { command: "shell command, run with sh -c in the workspace root" },
};

/** Largest slice of a file `read_file` returns. */
export const READ_LIMIT_BYTES = 256 * 1024;
/** Most entries `list_files` returns. */
export const LIST_LIMIT = 1000;
/** Default timeout of `run`. */
export const RUN_TIMEOUT_MS = 60_000;
/** Bytes kept of each of `run`'s stdout and stderr. */
export const RUN_OUTPUT_LIMIT = 64 * 1024;
/** Longest summary recorded in the tool state. */
export const SUMMARY_LIMIT = 100;

/** Environment variables `run` never passes to the command. */
const SECRET_ENV = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_AUTH_TOKEN"];

/** Where and how tools run. */
export interface ToolContext {
  /** The workspace root. */
  root: string;
  /** `run` is allowed (`--allow-run`). */
  allowRun: boolean;
  /** Environment of `run` (default `process.env`; API keys are removed either way). */
  env?: Readonly<Record<string, string | undefined>>;
  runTimeoutMs?: number;
}

/** What a tool call produced: `content` goes back to the model, `summary` to the tool state. */
export interface ToolOutcome {
  ok: boolean;
  content: string;
  summary: string;
}

/** Why a confined access refused a path the check let through (a link swapped in between). */
const CHANGED = "changed while being accessed (a link leading out, or swapped in); not";

/** A failure reported to the model as an error result. */
class ToolFailure extends Error {}

function fail(message: string): never {
  throw new ToolFailure(message);
}

/** Cuts a summary to one line of at most {@link SUMMARY_LIMIT} code points. */
export function shortSummary(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  const cps = [...line];
  return cps.length <= SUMMARY_LIMIT ? line : `${cps.slice(0, SUMMARY_LIMIT - 1).join("")}…`;
}

function escapes(rel: string): boolean {
  return rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel);
}

function stringArg(input: Record<string, unknown>, tool: string, arg: string): string {
  const v = input[arg];
  if (typeof v !== "string") fail(`${tool} needs a string \`${arg}\``);
  return v;
}

/**
 * Resolves `path` inside the workspace, or fails saying why. Returns the absolute path
 * and the path relative to the workspace (`.` for the root).
 */
export async function confinePath(
  root: string,
  path: string,
): Promise<{ abs: string; rel: string }> {
  if (path === "") fail("path must not be empty");
  if (path.includes("\0")) fail("path must not contain NUL");
  const realRoot = await realpath(root);
  const abs = resolve(realRoot, path);
  const rel = relative(realRoot, abs);
  if (escapes(rel)) fail(`${path}: outside the workspace`);
  let probe = abs;
  for (;;) {
    try {
      const real = await realpath(probe);
      if (escapes(relative(realRoot, real))) {
        fail(`${path}: resolves outside the workspace (symlink)`);
      }
      break;
    } catch (err) {
      if (err instanceof ToolFailure) throw err;
      if (nodeErrorCode(err) !== "ENOENT") throw err;
      const link = await lstat(probe).catch(() => null);
      if (link?.isSymbolicLink()) fail(`${path}: dangling symlink`);
      const up = dirname(probe);
      if (up === probe) break;
      probe = up;
    }
  }
  return { abs, rel: rel === "" ? "." : rel };
}

function fsMessage(err: unknown, path: string): string {
  switch (nodeErrorCode(err)) {
    case "ENOENT":
      return `${path}: no such file or directory`;
    case "EISDIR":
      return `${path}: is a directory`;
    case "ENOTDIR":
      return `${path}: not a directory`;
    case "EACCES":
    case "EPERM":
      return `${path}: permission denied`;
    default:
      return `${path}: ${err instanceof Error ? err.message : String(err)}`;
  }
}

async function readFileTool(
  input: Record<string, unknown>,
  ctx: ToolContext,
): Promise<ToolOutcome> {
  const path = stringArg(input, "read_file", "path");
  const { abs, rel } = await confinePath(ctx.root, path);
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(abs);
  } catch (err) {
    return fail(fsMessage(err, rel));
  }
  if (info.isDirectory()) fail(`${rel}: is a directory (use list_files)`);
  if (!info.isFile()) fail(`${rel}: not a regular file`);
  const read = await readConfined(abs, await confinedRoots([ctx.root]), {
    limitBytes: READ_LIMIT_BYTES,
  });
  if (!read.ok) fail(`${rel}: ${CHANGED} read`);
  const { size } = read;
  const text = read.bytes.toString("utf8");
  const cut = size > READ_LIMIT_BYTES;
  return {
    ok: true,
    content: cut ? `${text}\n[truncated: first ${READ_LIMIT_BYTES} of ${size} bytes]` : text,
    summary: `${rel} (${size} bytes${cut ? ", truncated" : ""})`,
  };
}

async function listFilesTool(
  input: Record<string, unknown>,
  ctx: ToolContext,
): Promise<ToolOutcome> {
  const given = input.dir ?? input.path;
  if (given !== undefined && typeof given !== "string") fail("list_files needs a string `dir`");
  const { abs, rel } = await confinePath(
    ctx.root,
    given === undefined || given === "" ? "." : given,
  );
  try {
    const info = await stat(abs);
    if (!info.isDirectory()) fail(`${rel}: not a directory`);
  } catch (err) {
    if (err instanceof ToolFailure) throw err;
    return fail(fsMessage(err, rel));
  }
  const list = await listConfined(abs, await confinedRoots([ctx.root]));
  if (!list.ok) fail(`${rel}: ${CHANGED} listed`);
  const names = list.names.map((n) => (list.dirs.has(n) ? `${n}/` : n)).sort(compareCodePoints);
  const shown = names.slice(0, LIST_LIMIT);
  const more = names.length - shown.length;
  return {
    ok: true,
    content:
      shown.join("\n") + (more > 0 ? `\n[${more} more entries not listed]` : "") ||
      "(empty directory)",
    summary: `${rel}: ${names.length} entr${names.length === 1 ? "y" : "ies"}`,
  };
}

async function writeFileTool(
  input: Record<string, unknown>,
  ctx: ToolContext,
): Promise<ToolOutcome> {
  const path = stringArg(input, "write_file", "path");
  const content = stringArg(input, "write_file", "content");
  const { abs, rel } = await confinePath(ctx.root, path);
  if (rel === ".") fail("write_file needs a file path, not the workspace root");
  const done = await writeConfined(abs, await confinedRoots([ctx.root]), content);
  if (!done.ok) {
    fail(done.why === "not_a_file" ? `${rel}: not a regular file` : `${rel}: ${CHANGED} written`);
  }
  const bytes = Buffer.byteLength(content, "utf8");
  return {
    ok: true,
    content: `wrote ${bytes} bytes to ${rel}`,
    summary: `${rel} (${bytes} bytes written)`,
  };
}

function runTool(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutcome> {
  if (!ctx.allowRun) fail("run needs approval (--allow-run)");
  const command = stringArg(input, "run", "command");
  if (command.trim() === "") fail("run needs a non-empty `command`");
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(ctx.env ?? process.env)) {
    if (v !== undefined && !SECRET_ENV.includes(k)) env[k] = v;
  }
  const timeout = ctx.runTimeoutMs ?? RUN_TIMEOUT_MS;
  const label = shortSummary(command).slice(0, 40);
  return new Promise((done) => {
    const child = spawn("sh", ["-c", command], {
      cwd: ctx.root,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const keep = { out: [] as Buffer[], err: [] as Buffer[], outN: 0, errN: 0 };
    child.stdout.on("data", (b: Buffer) => {
      if (keep.outN < RUN_OUTPUT_LIMIT) keep.out.push(b.subarray(0, RUN_OUTPUT_LIMIT - keep.outN));
      keep.outN += b.length;
    });
    child.stderr.on("data", (b: Buffer) => {
      if (keep.errN < RUN_OUTPUT_LIMIT) keep.err.push(b.subarray(0, RUN_OUTPUT_LIMIT - keep.errN));
      keep.errN += b.length;
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeout);
    const finish = (status: string, ok: boolean) => {
      clearTimeout(timer);
      const stream = (name: string, parts: Buffer[], n: number) =>
        n === 0
          ? ""
          : `\n--- ${name}${n > RUN_OUTPUT_LIMIT ? ` (first ${RUN_OUTPUT_LIMIT} of ${n} bytes)` : ""}\n${Buffer.concat(parts).toString("utf8")}`;
      done({
        ok,
        content: `${status}${stream("stdout", keep.out, keep.outN)}${stream("stderr", keep.err, keep.errN)}`,
        summary: `\`${label}\` ${status}`,
      });
    };
    child.on("error", (err) => finish(`failed to start: ${err.message}`, false));
    child.on("close", (code, signal) => {
      if (timedOut) finish(`timed out after ${timeout} ms`, false);
      else if (code === null) finish(`killed by ${signal ?? "a signal"}`, false);
      else finish(`exit ${code}`, code === 0);
    });
  });
}

const IMPLEMENTATIONS: Record<
  BuiltinTool,
  (input: Record<string, unknown>, ctx: ToolContext) => Promise<ToolOutcome>
> = {
  read_file: readFileTool,
  list_files: listFilesTool,
  write_file: writeFileTool,
  run: runTool,
};

/** Whether `name` has a built-in implementation. */
export function isBuiltin(name: string): name is BuiltinTool {
  return (BUILTIN_TOOLS as readonly string[]).includes(name);
}

/**
 * Runs the tool `name` the model asked for, if the workspace registry offers it. Never
 * throws for a tool-level problem: it comes back as `{ok: false, content: reason}`.
 *
 * @example await executeTool("read_file", { path: "AGENTS.md" }, config.tools, { root, allowRun: false })
 */
export async function executeTool(
  name: string,
  input: unknown,
  registry: readonly ToolSpec[],
  ctx: ToolContext,
): Promise<ToolOutcome> {
  try {
    if (!registry.some((t) => t.name === name)) {
      const offered = registry.map((t) => t.name).join(", ") || "none";
      fail(`unknown tool "${name}" (the workspace offers: ${offered})`);
    }
    if (!isBuiltin(name)) fail(`tool "${name}" has no built-in implementation`);
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      fail(`${name}: arguments must be a JSON object`);
    }
    const out = await IMPLEMENTATIONS[name](input as Record<string, unknown>, ctx);
    return { ...out, summary: shortSummary(out.summary) };
  } catch (err) {
    const message =
      err instanceof ToolFailure
        ? err.message
        : `${name} failed: ${err instanceof Error ? err.message : String(err)}`;
    return { ok: false, content: message, summary: shortSummary(message) };
  }
}
