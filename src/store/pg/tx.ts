/**
 * Transactions of the PostgreSQL store. Every statement runs inside one, and a scoped
 * transaction declares its scopes first, in the round trip of its BEGIN
 * (`promptctx_begin`, once per transaction; its settings are local to the transaction,
 * so a pooled connection never carries them over). Row-level security sees the current
 * scope only, and only if it is one of those declared (see guard.ts). A transaction
 * that declares none sees no scope data (the owner's cross-scope reads aside).
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
  /**
   * Only this scope's rows are visible and writable from now on (until changed); it must
   * be one of the transaction's declared {@link TxOptions.scopes}, else nothing is.
   */
  setScope(userScope: string): Promise<void>;
}

export interface TxOptions {
  readOnly?: boolean;
  /** REPEATABLE READ: every statement sees the same snapshot. Default READ COMMITTED. */
  snapshot?: boolean;
  /**
   * The scopes the transaction may use, declared with BEGIN in the same round trip; the
   * first is current from the first statement on. None: no scope data is visible.
   */
  scopes?: readonly string[];
}

/**
 * A PostgreSQL array literal of `items` (each quoted; `"` and `\` escaped).
 *
 * @example arrayLiteral(['a', 'b"c']) // '{"a","b\\"c"}'
 */
export function arrayLiteral(items: readonly string[]): string {
  return `{${items.map((s) => `"${s.replace(/["\\]/g, "\\$&")}"`).join(",")}}`;
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
      await client.query("SELECT set_config('promptctx.scope', $1, true)", [userScope]);
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
  // One simple-protocol round trip: BEGIN, then the scopes (a quoted literal).
  const scopes = options.scopes ?? [];
  const scope =
    scopes.length === 0
      ? ""
      : `; SELECT promptctx_begin(${client.escapeLiteral(arrayLiteral(scopes))}::text[])`;
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
