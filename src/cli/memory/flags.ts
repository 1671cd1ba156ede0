/**
 * The flags every `promptctx memory` verb shares: where the store is (`--store PATH|URL`
 * or `--workspace DIR`), opened for writing or as an existing store, and the parsing of the
 * `--now`, number and list flags.
 */
import { existsSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Command } from "commander";
import { InvalidInputError } from "../../errors/index.js";
import { GATE_MODES, type GateMode } from "../../memory/index.js";
import {
  isPostgresUrl,
  type OpenAnyStoreOptions,
  type OpenedStore,
  openStoreUrl,
} from "../../store/index.js";
import { isBlank, parseInstant } from "../../text/index.js";
import { loadWorkspaceConfig } from "../../workspace/index.js";
import { createStoreIfAbsent } from "../new-store.js";

/** `--store` and `--workspace` as given. */
export interface StoreFlags {
  store?: string;
  workspace?: string;
  /** `--gate`: the takeover gate's mode for this command's writes. */
  gate?: string;
}

/**
 * The write policy of a memory verb: the workspace config's `memory` section (when the store
 * is the workspace's), `--gate` over its mode.
 */
async function writeOptions(flags: StoreFlags): Promise<OpenAnyStoreOptions> {
  const out: OpenAnyStoreOptions = {};
  if (flags.store === undefined) {
    const root = resolve(flags.workspace ?? ".");
    const memory = existsSync(root) ? (await loadWorkspaceConfig(root)).memory : undefined;
    if (memory?.gate !== undefined) out.gate = memory.gate;
    if (memory?.limits !== undefined) out.limits = memory.limits;
  }
  if (flags.gate !== undefined) {
    if (!(GATE_MODES as readonly string[]).includes(flags.gate)) {
      throw new InvalidInputError(`--gate must be one of ${GATE_MODES.join(", ")}`, "--gate");
    }
    out.gate = flags.gate as GateMode;
  }
  return out;
}

/**
 * The store for `--store` / `--workspace` (default workspace: the cwd): a file path, or a
 * `postgres://` URL as given.
 *
 * @example resolveStorePath({ workspace: "/w" }) // "/w/.promptctx/memory.db"
 */
export function resolveStorePath(flags: StoreFlags, cwd = process.cwd()): string {
  if (flags.store !== undefined && flags.workspace !== undefined) {
    throw new InvalidInputError("give --store or --workspace, not both", "--store");
  }
  if (flags.store !== undefined) {
    if (isBlank(flags.store)) throw new InvalidInputError("--store must not be blank", "--store");
    return isPostgresUrl(flags.store) ? flags.store : resolve(cwd, flags.store);
  }
  return join(resolve(cwd, flags.workspace ?? "."), ".promptctx", "memory.db");
}

/**
 * The store of `flags` for a verb that writes: a workspace's `.promptctx/` is created if
 * missing, an explicit `--store` path's directory must exist.
 *
 * @example const store = await openForWrite({ workspace: "." });
 */
export async function openForWrite(flags: StoreFlags): Promise<OpenedStore> {
  const path = resolveStorePath(flags);
  if (flags.store !== undefined) await createStoreIfAbsent(path, "memory");
  // The workspace layout owns `.promptctx/`; an explicit --store path must already have
  // its directory (a typo should not create directories).
  const options = await writeOptions(flags);
  if (flags.store === undefined) mkdirSync(dirname(path), { recursive: true });
  return openStoreUrl(path, options);
}

/**
 * The store of `flags`, which must already exist (an InvalidInputError naming the flag if
 * not).
 *
 * @example const store = await openExisting({ store: "memory.db" });
 */
export async function openExisting(flags: StoreFlags): Promise<OpenedStore> {
  const path = resolveStorePath(flags);
  const options = { ...(await writeOptions(flags)), mustExist: true };
  if (isPostgresUrl(path)) return openStoreUrl(path, options);
  if (flags.store !== undefined) await createStoreIfAbsent(path, "memory");
  if (!existsSync(path)) {
    throw new InvalidInputError(
      `no memory store at ${path} (create one with \`promptctx memory add\` or \`memory import\`)`,
      flags.store !== undefined ? "--store" : "--workspace",
    );
  }
  return openStoreUrl(path, options);
}

/**
 * `--now`: an ISO-8601 timestamp, or the wall clock when absent.
 *
 * @example nowFlag("2026-11-30T09:00:00Z") // "2026-11-30T09:00:00Z"
 */
export function nowFlag(value: string | undefined): string {
  if (value === undefined) return new Date().toISOString();
  if (parseInstant(value) === null) {
    throw new InvalidInputError("--now must be an ISO-8601 timestamp", "--now");
  }
  return value;
}

/**
 * A number flag in `[min, max]` (an integer when `integer`), else an InvalidInputError.
 *
 * @example numberFlag("20", "--limit", 1, 1000, true) // 20
 */
export function numberFlag(
  value: string,
  flag: string,
  min: number,
  max: number,
  integer: boolean,
) {
  const n = Number(value);
  if (
    isBlank(value) ||
    !Number.isFinite(n) ||
    n < min ||
    n > max ||
    (integer && !Number.isInteger(n))
  ) {
    const what = integer ? "an integer" : "a number";
    throw new InvalidInputError(`${flag} must be ${what} in [${min}, ${max}]`, flag);
  }
  return n;
}

/**
 * A comma-separated list flag, trimmed, empty entries dropped.
 *
 * @example listFlag("a, b,,c") // ["a", "b", "c"]
 */
export function listFlag(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/**
 * Adds `--store` and `--workspace` to a `memory` subcommand.
 *
 * @example storeOptions(memory.command("export"))
 */
export function storeOptions(cmd: Command): Command {
  return cmd
    .option("--store <path|url>", "memory store: an SQLite file, or postgres://… (shared store)")
    .option("--workspace <dir>", "use DIR/.promptctx/memory.db (default: the current directory)")
    .option(
      "--gate <mode>",
      "takeover gate for writes: quarantine | reject | off (default: the workspace config's memory.gate, else quarantine)",
    );
}
