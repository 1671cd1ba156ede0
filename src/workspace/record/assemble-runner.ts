/**
 * Rerunning an `assemble` request (and running one: CLI `assemble` and `demo` call
 * {@link runAssembleRequest}, so what a line records is what ran): the store it names,
 * the options it gives. Apart from the other kinds' runners (runners.ts) so that the
 * `assemble` verb loads neither the chat loop nor the replay machinery.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { InvalidInputError } from "../../errors/index.js";
import { confinedPath, confinedRoots } from "../../files/index.js";
// Not the store's index: a request without a store loads none of its code.
import { isPostgresUrl } from "../../store/url.js";
import {
  assembleWorkspace,
  type WorkspaceAssembleOptions,
  type WorkspaceAssembly,
} from "../workspace.js";
import type { AssembleRecordRequest, StoreSpec } from "./schema.js";

/** A path of a recorded request, resolved against the recording's directory. */
export const inDir = (dir: string, path: string): string =>
  isAbsolute(path) ? path : resolve(dir, path);

/**
 * The recorded form of a store target: a `postgres://` URL as given, a file path made
 * absolute.
 *
 * @example storeTarget("memory.db") // "/abs/cwd/memory.db"
 */
export function storeTarget(target: string): string {
  return isPostgresUrl(target) ? target : resolve(target);
}

/**
 * The request as written to a recording: a `postgres://` store URL loses its password
 * (a replay reads it from PGPASSWORD), so no recording holds a credential.
 */
export function withoutStorePassword<R extends AssembleRecordRequest>(request: R): R {
  const store = request.store;
  if (store === undefined || !("path" in store) || !isPostgresUrl(store.path)) return request;
  try {
    const url = new URL(store.path);
    if (url.password === "") return request;
    url.password = "";
    return { ...request, store: { path: url.toString() } };
  } catch {
    return request;
  }
}

/**
 * Runs `fn` with the store path a request names: its `path`, a store created from its
 * `seed` in a temporary directory (removed afterwards), or none (the workspace default).
 */
export async function withRecordedStore<T>(
  spec: StoreSpec | undefined,
  dir: string,
  fn: (storePath: string | undefined) => Promise<T>,
): Promise<T> {
  if (spec === undefined) return fn(undefined);
  if ("path" in spec) return fn(isPostgresUrl(spec.path) ? spec.path : inDir(dir, spec.path));
  const tmp = mkdtempSync(join(tmpdir(), "promptctx-replay-"));
  try {
    const storePath = join(tmp, "memory.db");
    const { openStore } = await import("../../store/index.js");
    const store = openStore(storePath);
    try {
      const result = await store.importJsonl(spec.seed.jsonl, { now: spec.seed.now });
      if (result.skipped > 0) {
        const first = result.errors[0];
        throw new InvalidInputError(
          `store seed: ${result.skipped} line(s) skipped${first ? ` (line ${first.line}: ${first.message})` : ""}`,
          "request.store.seed.jsonl",
        );
      }
    } finally {
      await store.close();
    }
    return await fn(storePath);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** The assembly settings an `assemble` request may give; absent ones are the config's. */
export type AssembleRequestFields = Pick<
  AssembleRecordRequest,
  "mode" | "user" | "tokenizer" | "model" | "budgetChars" | "budgetTokens"
>;

/**
 * The assembly settings a request gives (mode, user, tokenizer, model, budgets), in that
 * order and only those present: the part of a request that the recorded form (the server's
 * `/v1/assemble`) and the rerun's options ({@link recordedOptions}) copy alike.
 *
 * @example
 * ```ts
 * assembleRequestFields({ user: "u1", budgetChars: null }); // { user: "u1", budgetChars: null }
 * ```
 */
export function assembleRequestFields(r: AssembleRequestFields): AssembleRequestFields {
  return {
    ...(r.mode !== undefined ? { mode: r.mode } : {}),
    ...(r.user !== undefined ? { user: r.user } : {}),
    ...(r.tokenizer !== undefined ? { tokenizer: r.tokenizer } : {}),
    ...(r.model !== undefined ? { model: r.model } : {}),
    ...(r.budgetChars !== undefined ? { budgetChars: r.budgetChars } : {}),
    ...(r.budgetTokens !== undefined ? { budgetTokens: r.budgetTokens } : {}),
  };
}

/**
 * Refuses, before anything is read, a recorded `cwd`, `home` or user file that is not
 * inside the recorded workspace with symlinks resolved (files/confine.ts): a replay reads
 * nothing a recording names outside its workspace. Missing and outside are one
 * `path_refused` error naming the field (`request.userFiles[0]`), never the target.
 *
 * @example await confineRecorded({ workspace: "ws", query: "q", now, userFiles: ["/etc/passwd"] }, dir) // throws path_refused
 */
export async function confineRecorded(r: AssembleRecordRequest, dir: string): Promise<void> {
  const roots = await confinedRoots([inDir(dir, r.workspace)]);
  if (r.cwd !== undefined) await confinedPath(inDir(dir, r.cwd), roots, ["request", "cwd"]);
  if (r.home !== undefined) await confinedPath(inDir(dir, r.home), roots, ["request", "home"]);
  for (const [i, f] of (r.userFiles ?? []).entries()) {
    await confinedPath(inDir(dir, f), roots, ["request", "userFiles", i], "file");
  }
}

/**
 * The workspace job's options for a recorded request (everything but the store). When
 * `confined` (a replay), user files are read only inside the workspace.
 */
export function recordedOptions(
  r: AssembleRecordRequest,
  dir: string,
  storePath: string | undefined,
  confined = false,
): WorkspaceAssembleOptions {
  return {
    ...(confined ? { userRoots: [] } : {}),
    workspace: inDir(dir, r.workspace),
    query: r.query,
    now: r.now,
    ...assembleRequestFields(r),
    ...(storePath !== undefined ? { store: storePath } : {}),
    ...(r.cwd !== undefined ? { cwd: inDir(dir, r.cwd) } : {}),
    ...(r.renderer !== undefined ? { renderer: r.renderer } : {}),
    ...(r.userFiles !== undefined ? { userFiles: r.userFiles.map((f) => inDir(dir, f)) } : {}),
    ...(r.home !== undefined ? { home: inDir(dir, r.home) } : {}),
  };
}

/**
 * Runs an `assemble` request: the workspace job with the request's store (`confined`: as
 * a replay does, after {@link confineRecorded}). `embedderEnv` is the environment a remote
 * embedder named by the workspace config reads (base URL, key; the CLI passes its own).
 *
 * @example const out = await runAssembleRequest({ workspace: "examples/workspace", query: "add an index", now: "2026-11-30T09:00:00Z" }, process.cwd());
 */
export function runAssembleRequest(
  request: AssembleRecordRequest,
  dir: string,
  confined = false,
  embedderEnv?: Readonly<Record<string, string | undefined>>,
): Promise<WorkspaceAssembly> {
  return withRecordedStore(request.store, dir, (storePath) =>
    assembleWorkspace({
      ...recordedOptions(request, dir, storePath, confined),
      ...(embedderEnv !== undefined ? { embedderEnv } : {}),
    }),
  );
}
