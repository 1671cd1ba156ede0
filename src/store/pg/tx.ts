/**
 * Transactions of the PostgreSQL store. Every statement runs inside one, and the
 * transaction names the scope its statements may see (`set_config('promptctx.scope', …,
 * true)`: local to the transaction, so a pooled connection never carries it over). Row-
 * level security reads that setting (see pg-migrations.ts).
 *
 * A transaction that fails on a deadlock or a serialization failure — concurrent writers
 * touching the same rows — is rolled back and run again, up to {@link MAX_ATTEMPTS} times.
 */
import type { Pool, PoolClient, QueryResultRow } from "pg";

/** Attempts of a transaction that keeps failing on a deadlock or serialization failure. */
export const MAX_ATTEMPTS = 8;

// serialization_failure, deadlock_detected, and unique_violation (two writers inserting
// the same new scope or id at once: the retry sees the winner's row).
const RETRYABLE = new Set(["40001", "40P01", "23505"]);

/** Thrown inside a transaction to roll it back and run it again (a race was detected). */
export class RetryTransaction extends Error {
  constructor(why: string) {
    super(why);
    this.name = "RetryTransaction";
  }
}

/** One transaction: its statements and the scope they run under. */
export interface Tx {
  query<R extends QueryResultRow>(sql: string, params?: readonly unknown[]): Promise<R[]>;
  /** Only this scope's rows are visible and writable from now on (until changed). */
  setScope(userScope: string): Promise<void>;
  /** Reads of `memories` see every scope (writes still need a scope). */
  readAll(): Promise<void>;
}

export interface TxOptions {
  readOnly?: boolean;
  /** REPEATABLE READ: every statement sees the same snapshot. Default READ COMMITTED. */
  snapshot?: boolean;
  /** The scope from the first statement on (set with BEGIN, in the same round trip). */
  scope?: string;
}

function sqlState(err: unknown): string | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" ? code : undefined;
}

function txOf(client: PoolClient): Tx {
  return {
    async query<R extends QueryResultRow>(sql: string, params: readonly unknown[] = []) {
      return (await client.query<R>(sql, params as unknown[])).rows;
    },
    async setScope(userScope) {
      await client.query(
        "SELECT set_config('promptctx.read_all', 'off', true), set_config('promptctx.scope', $1, true)",
        [userScope],
      );
    },
    async readAll() {
      await client.query(
        "SELECT set_config('promptctx.scope', '', true), set_config('promptctx.read_all', 'on', true)",
      );
    },
  };
}

/** One run of `fn` in BEGIN … COMMIT; `state.broken` when even ROLLBACK failed. */
async function attempt<T>(
  client: PoolClient,
  options: TxOptions,
  fn: (tx: Tx) => Promise<T>,
  state: { broken: boolean },
): Promise<T> {
  const level = options.snapshot ? "REPEATABLE READ" : "READ COMMITTED";
  // One simple-protocol round trip: BEGIN, then the scope (a quoted literal).
  const scope =
    options.scope === undefined
      ? ""
      : `; SELECT set_config('promptctx.scope', ${client.escapeLiteral(options.scope)}, true)`;
  try {
    await client.query(
      `BEGIN ISOLATION LEVEL ${level}${options.readOnly ? " READ ONLY" : ""}${scope}`,
    );
    const out = await fn(txOf(client));
    await client.query("COMMIT");
    return out;
  } catch (err) {
    try {
      await client.query("ROLLBACK");
    } catch {
      state.broken = true; // the connection is unusable: the pool must drop it
    }
    throw err;
  }
}

/**
 * Runs `fn` in a transaction on a pooled connection; commits when it resolves, rolls back
 * when it throws. Retries on the failures of concurrent writers (see the module doc).
 */
export async function inTransaction<T>(
  pool: Pool,
  options: TxOptions,
  fn: (tx: Tx) => Promise<T>,
): Promise<T> {
  for (let n = 1; ; n++) {
    const client = await pool.connect();
    const state = { broken: false };
    try {
      return await attempt(client, options, fn, state);
    } catch (err) {
      const retry = err instanceof RetryTransaction || RETRYABLE.has(sqlState(err) ?? "");
      if (!retry || n >= MAX_ATTEMPTS) throw err;
    } finally {
      client.release(state.broken);
    }
  }
}
