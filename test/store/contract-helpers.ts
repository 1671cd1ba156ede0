/** Helpers of the contract suite: a per-test store that is always closed, error capture. */
import { afterEach, beforeEach } from "vitest";
import type { MemoryStore } from "../../src/store/index.js";
import type { ContractStoreOptions, StoreBackend } from "./contract.js";

/** The error `f` rejects (or throws) with; fails when it resolves. */
export async function failure(f: () => unknown): Promise<unknown> {
  try {
    await f();
  } catch (err) {
    return err;
  }
  throw new Error("expected an error");
}

/** Every JSONL line the store exports, as one string. */
export async function exportText(s: MemoryStore): Promise<string> {
  let out = "";
  await s.exportJsonl((chunk) => {
    out += chunk;
  });
  return out;
}

/**
 * A fresh store per test (`ctx.store`), and `ctx.open()` for more; all of them are closed
 * after the test.
 */
export function useStores(backend: StoreBackend): {
  readonly store: MemoryStore;
  open(options?: ContractStoreOptions): Promise<MemoryStore>;
} {
  const opened: MemoryStore[] = [];
  let current: MemoryStore | null = null;
  const open = async (options?: ContractStoreOptions) => {
    const s = await backend.open(options);
    opened.push(s);
    return s;
  };
  beforeEach(async () => {
    current = await open();
  });
  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close();
    current = null;
  });
  return {
    get store() {
      if (current === null) throw new Error("no store outside a test");
      return current;
    },
    open,
  };
}
