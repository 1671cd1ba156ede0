/** The per-scope limits of the PostgreSQL store's batch writer (see ../write-gate.ts). */
import {
  type PreparedWrite,
  ScopeBudget,
  type ScopeUsage,
  type StoreLimits,
} from "../write-gate.js";
import type { WriteOutcome } from "../write-outcome.js";
import type { Tx } from "./tx.js";

/**
 * The scope limits, checked in input order (a scope's usage read once, under a
 * transaction-level lock of the scope so that concurrent writers of it take turns); a
 * breach throws, and the transaction rolls back.
 */
export async function checkLimits(
  tx: Tx,
  scopes: readonly string[],
  writes: readonly PreparedWrite[],
  outcomes: readonly WriteOutcome[],
  limits: StoreLimits,
): Promise<void> {
  const usage = new Map<string, ScopeUsage>();
  const budget = new ScopeBudget(limits, (scope) => usage.get(scope)!);
  if (!budget.active) return;
  for (const s of scopes) {
    await tx.setScope(s);
    await tx.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`promptctx:${s}`]);
    const rows = await tx.query<{ records: string; bytes: string }>(
      `SELECT (SELECT count(*) FROM promptctx_memories WHERE user_scope = $1)::text AS records,
         ((SELECT coalesce(sum(bytes), 0) FROM promptctx_memories WHERE user_scope = $1)
          + (SELECT coalesce(sum(bytes), 0) FROM promptctx_memory_versions WHERE user_scope = $1))::text AS bytes`,
      [s],
    );
    usage.set(s, { records: Number(rows[0]?.records ?? 0), bytes: Number(rows[0]?.bytes ?? 0) });
  }
  writes.forEach((w, i) => {
    budget.add(w.record.userScope, w.bytes, outcomes[i] === "inserted", ["records", i]);
  });
}
