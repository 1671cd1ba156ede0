/**
 * What an MCP session works on: its scope (fixed by `--user` on stdio, by the bearer
 * token over HTTP: never by anything the client sends), the workspace root, the warm
 * workspaces, the memory store and the clock; and the last manifest of each scope.
 */

import type { MemoryStore } from "../../store/index.js";
import type { CounterPool } from "../../tokens/index.js";
import type { AssemblyManifest } from "../../trace/index.js";
import type { WarmWorkspaces } from "../../workspace/index.js";

/** The manifest of a scope's last assembly, with what it was assembled for. */
export interface LastManifest {
  query: string;
  now: string;
  /** The workspace, relative to the root (`.` for the root). */
  workspace: string;
  /** The whole manifest, `timings` left out (the deterministic part). */
  manifest: Omit<AssemblyManifest, "timings">;
}

/**
 * The last manifest of each scope, at most `max` scopes (the oldest written is forgotten
 * first): the `manifest://last` resource of every session of that scope.
 *
 * @example
 * const manifests = new LastManifests();
 * manifests.get("u1"); // null until u1's first assembly
 */
export class LastManifests {
  readonly #byScope = new Map<string, LastManifest>();
  readonly #max: number;

  constructor(max = 1000) {
    this.#max = max;
  }

  /** The scope's last manifest, or null before its first assembly. */
  get(scope: string): LastManifest | null {
    return this.#byScope.get(scope) ?? null;
  }

  /** Records the scope's latest assembly. */
  set(scope: string, last: LastManifest): void {
    this.#byScope.delete(scope);
    this.#byScope.set(scope, last);
    if (this.#byScope.size > this.#max) {
      const oldest = this.#byScope.keys().next().value as string;
      this.#byScope.delete(oldest);
    }
  }
}

/** One MCP session's world. */
export interface McpContext {
  /** The user scope every tool, resource and prompt reads and writes. */
  scope: string;
  /** The workspace root (a real path): workspaces named by the client stay inside it. */
  root: string;
  workspaces: WarmWorkspaces;
  /** The memory store, or null when the server has none. */
  store: () => MemoryStore | null;
  /** The clock of a call that gives no `now`. */
  clock: () => Date;
  counters: () => CounterPool;
  manifests: LastManifests;
}
