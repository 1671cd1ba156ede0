/**
 * The store contract suite: the same tests against every backend (SQLite, PostgreSQL).
 * A backend file calls {@link storeContract} with a factory of fresh, empty stores.
 */
import { describe } from "vitest";
import type { MemoryStore } from "../../src/store/index.js";
import { recallContract } from "./contract-recall.js";
import { recordsContract } from "./contract-records.js";

/** Options every backend's opener takes. */
export interface ContractStoreOptions {
  poolSize?: number;
  matchBudget?: number;
}

/** How the suite gets stores: each `open()` is a fresh, empty store the suite closes. */
export interface StoreBackend {
  name: string;
  open(options?: ContractStoreOptions): Promise<MemoryStore>;
}

/** Registers the whole contract for `backend`. */
export function storeContract(backend: StoreBackend): void {
  describe(`store contract (${backend.name})`, () => {
    recordsContract(backend);
    recallContract(backend);
  });
}
