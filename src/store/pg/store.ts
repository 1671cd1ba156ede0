/**
 * The shared memory store over PostgreSQL (docs/sources.md "scale-out"): the {@link MemoryStore}
 * contract of the SQLite store, asynchronously, for many processes at once. Opening,
 * migrations and the connection pool: open.ts; schema and row-level security:
 * migrations.ts; writes: write.ts; recall: recall.ts. Ranking, terms, JSONL
 * and validation are the SQLite store's own modules, so both backends answer alike
 * (same hits, same breakdowns, byte-identical exports).
 *
 * Scope: every statement has the scope in its predicate, and runs in a transaction that
 * declared its scopes (row-level security sees no other; guard.ts). The cross-scope
 * reads — `exportJsonl`, `count()` and `get(memoryId)` without a scope — are for the
 * owner's connection only ({@link PostgresMemoryStore.privileged}): the owner role's
 * policies let it read every scope; any other role gets a {@link StorePrivilegeError}.
 */
import type { Pool } from "pg";
import { InvalidInputError } from "../../errors/index.js";
import { instantMillis, isWellFormedText } from "../../text/index.js";
import { StorePrivilegeError } from "../errors.js";
import { recallHit } from "../hits.js";
import { importJsonlBatches } from "../jsonl-import.js";
import {
  entryPageQuery,
  ForgetTargetSchema,
  GetOptionsSchema,
  ListOptionsSchema,
  MemoryIdSchema,
  parseNow,
  parseWith,
  RecallOptionsSchema,
  ScopeOptionsSchema,
} from "../options.js";
import { type MemoryRow, rowToRecord } from "../row.js";
import {
  type MemoryRecord,
  type MemoryRecordInput,
  parseRecord,
  recordToJsonLine,
} from "../schema.js";
import { checkWeights, DEFAULT_WEIGHTS } from "../score.js";
import { rankSnapshot, visibleAt } from "../snapshot.js";
import { queryTerms } from "../terms.js";
import type {
  AddOptions,
  AddResult,
  EntryPage,
  ForgetResult,
  ForgetTarget,
  GetOptions,
  ImportOptions,
  ImportResult,
  JsonlInput,
  ListEntriesOptions,
  ListOptions,
  MemoryEntry,
  MemoryStore,
  MemoryVersion,
  RecallOptions,
  StoreRecallHit,
} from "../types.js";
import { prepareWrite, type WritePolicy, writePolicy } from "../write-gate.js";
import { PgManage } from "./manage.js";
import { recallPg } from "./recall.js";
import { inTransaction, type Tx } from "./tx.js";
import type { PgVectorIndex } from "./vectors.js";
import { batchScopes, writeBatch } from "./write.js";

/** A `promptctx_memories` row as {@link COLUMNS} reads it. */
interface PgRow extends MemoryRow {
  id: string;
}

const COLUMNS = `id, memory_id, user_scope, kind, category, tags, content, summary, importance,
  conflict_key, authority, source_id, source_type, source_title, captured_at, stored_at`;

/** Rows per page of an export. */
const EXPORT_PAGE = 2000;

/** False for text no record can hold (U+0000, lone surrogates): such a key matches nothing. */
function storable(s: string): boolean {
  return !s.includes("\u0000") && isWellFormedText(s);
}

/** The PostgreSQL implementation of {@link MemoryStore}; every method returns a promise. */
export class PostgresMemoryStore implements MemoryStore {
  /** The connection URL without its password (for messages). */
  readonly path: string;
  readonly poolSize: number;
  readonly matchBudget: number;
  /** Whether the connection's role owns the store, so it may read every scope. */
  readonly privileged: boolean;
  /** The store's vectors (recall by meaning over pgvector; see vectors.ts, ../hybrid.ts). */
  readonly vectors: PgVectorIndex;
  #pool: Pool;
  #closing: Promise<void> | null = null;

  /** The takeover gate's mode and the limits every write is held to. */
  readonly policy: WritePolicy;
  #manage: PgManage;

  /** Use {@link openPostgresStore}. */
  constructor(
    path: string,
    pool: Pool,
    sizes: { poolSize: number; matchBudget: number },
    privileged: boolean,
    vectors: PgVectorIndex,
    policy: WritePolicy = { gate: "quarantine", limits: {} },
  ) {
    this.path = path;
    this.vectors = vectors;
    this.policy = policy;
    this.#manage = new PgManage(pool);
    this.poolSize = sizes.poolSize;
    this.matchBudget = sizes.matchBudget;
    this.privileged = privileged;
    this.#pool = pool;
  }

  /** Refuses a cross-scope read on a connection that is not the owner's. */
  #needPrivilege(what: string): void {
    if (!this.privileged) throw new StorePrivilegeError(what, this.path);
  }

  /** True until {@link close}. */
  get open(): boolean {
    return this.#closing === null;
  }

  async add(records: readonly MemoryRecordInput[], options: AddOptions = {}): Promise<AddResult> {
    if (!Array.isArray(records)) throw new InvalidInputError("records must be an array", "records");
    const now = parseNow(options.now);
    const policy =
      options.gate === undefined
        ? this.policy
        : { gate: writePolicy({ gate: options.gate }).gate, limits: this.policy.limits };
    const writes = records.map((r, i) =>
      prepareWrite(parseRecord(r, ["records", i], now), policy, ["records", i]),
    );
    if (writes.length === 0) return { inserted: 0, updated: 0 };
    const scopes = batchScopes(writes.map((w) => w.record));
    const result = await inTransaction(this.#pool, { scopes }, async (tx) => {
      const r: AddResult = { inserted: 0, updated: 0 };
      for (const outcome of await writeBatch(tx, writes, policy.limits)) r[outcome]++;
      return r;
    });
    for (const w of writes) {
      if (w.rule !== null) {
        const { memoryId, userScope } = w.record;
        result.quarantined = [...(result.quarantined ?? []), { memoryId, userScope, rule: w.rule }];
      }
    }
    return result;
  }

  async importJsonl(input: JsonlInput, options: ImportOptions = {}): Promise<ImportResult> {
    return importJsonlBatches(input, options, this.policy, (writes) =>
      inTransaction(this.#pool, { scopes: batchScopes(writes.map((w) => w.record)) }, (tx) =>
        writeBatch(tx, writes, this.policy.limits),
      ),
    );
  }

  /** Every record, ordered by scope then id (byte order = code points), one snapshot. */
  async exportJsonl(write: (chunk: string) => void): Promise<number> {
    this.#needPrivilege("exportJsonl");
    return inTransaction(this.#pool, { readOnly: true, snapshot: true }, async (tx) => {
      let n = 0;
      let after: [string, string] | null = null;
      for (;;) {
        const rows: PgRow[] = await tx.query<PgRow>(
          after === null
            ? `SELECT ${COLUMNS} FROM promptctx_memories ORDER BY user_scope, memory_id LIMIT $1`
            : `SELECT ${COLUMNS} FROM promptctx_memories WHERE (user_scope, memory_id) > ($2, $3)
               ORDER BY user_scope, memory_id LIMIT $1`,
          after === null ? [EXPORT_PAGE] : [EXPORT_PAGE, ...after],
        );
        if (rows.length === 0) return n;
        write(rows.map((r) => `${recordToJsonLine(rowToRecord(r))}\n`).join(""));
        n += rows.length;
        const last = rows[rows.length - 1]!;
        after = [last.user_scope, last.memory_id];
      }
    });
  }

  async count(options: { userScope?: string } = {}): Promise<number> {
    const scope = options.userScope;
    if (scope === undefined) {
      this.#needPrivilege("count() without a userScope");
      const rows = await this.#pool.query<{ n: string }>(
        "SELECT coalesce(sum(memory_count), 0)::text AS n FROM promptctx_stats",
      );
      return Number(rows.rows[0]?.n ?? 0);
    }
    if (!storable(scope)) return 0;
    return this.#scoped(scope, async (tx) => {
      const rows = await tx.query<{ n: string }>(
        "SELECT count(*)::text AS n FROM promptctx_memories WHERE user_scope = $1",
        [scope],
      );
      return Number(rows[0]?.n ?? 0);
    });
  }

  async get(memoryId: string, options: GetOptions = {}): Promise<MemoryRecord | null> {
    const scope = parseWith(GetOptionsSchema, options, "options").userScope;
    if (scope === undefined) this.#needPrivilege("get(memoryId) without a userScope");
    if (typeof memoryId !== "string" || !storable(memoryId)) return null;
    const read = async (tx: Tx) => {
      const rows = await tx.query<PgRow>(
        `SELECT ${COLUMNS} FROM promptctx_memories
         WHERE memory_id = $1 AND ($2::text IS NULL OR user_scope = $2)
         ORDER BY user_scope LIMIT 1`,
        [memoryId, scope ?? null],
      );
      return rows[0] === undefined ? null : rowToRecord(rows[0]);
    };
    return scope === undefined
      ? inTransaction(this.#pool, { readOnly: true }, read)
      : this.#scoped(scope, read);
  }

  async list(options: ListOptions): Promise<MemoryRecord[]> {
    const o = parseWith(ListOptionsSchema, options, "options");
    return this.#scoped(o.userScope, async (tx) => {
      const rows = await tx.query<PgRow>(
        `SELECT ${COLUMNS} FROM promptctx_memories
         WHERE user_scope = $1 AND status = 'active'
           AND ($2::text[] IS NULL OR kind = ANY($2::text[]))
           AND ($3::text[] IS NULL OR category = ANY($3::text[]))
         ORDER BY memory_id`,
        [o.userScope, o.kinds ?? null, o.categories ?? null],
      );
      return rows.map(rowToRecord);
    });
  }

  async recall(query: string, options: RecallOptions): Promise<StoreRecallHit[]> {
    if (typeof query !== "string") throw new InvalidInputError("query must be a string", "query");
    const o = parseWith(RecallOptionsSchema, options, "options");
    const weights = checkWeights(o.weights ?? DEFAULT_WEIGHTS, "options.weights");
    const terms = queryTerms(query);
    // Nothing searchable (empty, punctuation, emoji, stop words only): no evidence, no hits.
    if (terms.length === 0) return [];
    const asOfMs = instantMillis(o.asOf) as number;
    const latest = await this.#manage.latestWrite(o.userScope);
    if (latest !== null && latest > asOfMs) {
      // A recall into the past: the scope as it was stored at asOf (see snapshot.ts).
      const records = visibleAt(await this.#manage.versions(o.userScope), asOfMs);
      return rankSnapshot(records, terms, {
        asOf: o.asOf,
        weights,
        limit: o.limit,
        ...(o.categories === undefined ? {} : { categories: o.categories }),
      });
    }
    const req = {
      userScope: o.userScope,
      terms,
      categories: o.categories ?? null,
      pool: Math.max(this.poolSize, o.limit),
      budget: this.matchBudget,
      asOf: o.asOf,
      weights,
      limit: o.limit,
    };
    const ranked = await this.#scoped(o.userScope, (tx) =>
      recallPg(tx, req, async (ids) => {
        const rows = await tx.query<PgRow>(
          `SELECT ${COLUMNS} FROM promptctx_memories WHERE user_scope = $1 AND id = ANY($2::int8[])`,
          [o.userScope, ids],
        );
        return new Map(rows.map((r) => [r.id, rowToRecord(r)]));
      }),
    );
    return ranked.map(({ record, breakdown }, i) => recallHit(record, breakdown, i + 1));
  }

  /** The epoch ms of the scope's latest replacement (a recall before it reads the past). */
  latestReplacement(userScope: string): Promise<number | null> {
    return this.#manage.latestWrite(userScope);
  }

  /** The scope's active records of row ids `rowids` (the vector search's hits). */
  async recordsByRowid(
    rowids: readonly number[],
    userScope: string,
  ): Promise<Map<number, MemoryRecord>> {
    if (rowids.length === 0) return new Map();
    return this.#scoped(userScope, async (tx) => {
      const rows = await tx.query<PgRow>(
        `SELECT ${COLUMNS} FROM promptctx_memories
         WHERE user_scope = $1 AND id = ANY($2::int8[]) AND status = 'active'`,
        [userScope, rowids],
      );
      return new Map(rows.map((r) => [Number(r.id), rowToRecord(r)]));
    });
  }

  async listEntries(options: ListEntriesOptions): Promise<EntryPage> {
    return this.#manage.page(entryPageQuery(options));
  }

  async getEntry(memoryId: string, options: { userScope: string }): Promise<MemoryEntry | null> {
    const id = parseWith(MemoryIdSchema, memoryId, "memoryId");
    const { userScope } = parseWith(ScopeOptionsSchema, options, "options");
    return this.#manage.entry(id, userScope);
  }

  async history(memoryId: string, options: { userScope: string }): Promise<MemoryVersion[]> {
    const id = parseWith(MemoryIdSchema, memoryId, "memoryId");
    const { userScope } = parseWith(ScopeOptionsSchema, options, "options");
    return this.#manage.history(id, userScope);
  }

  async approve(memoryId: string, options: { userScope: string }): Promise<MemoryEntry | null> {
    const id = parseWith(MemoryIdSchema, memoryId, "memoryId");
    const { userScope } = parseWith(ScopeOptionsSchema, options, "options");
    return this.#manage.approve(id, userScope);
  }

  async forget(target: ForgetTarget): Promise<ForgetResult> {
    const t = parseWith(ForgetTargetSchema, target, "target");
    if ("memoryId" in t) return this.#manage.forget(t.userScope, { memoryId: t.memoryId });
    return this.#manage.forget(t.userScope, {
      ...(t.kinds === undefined ? {} : { kinds: t.kinds }),
      ...(t.categories === undefined ? {} : { categories: t.categories }),
    });
  }

  /** A read-only snapshot transaction that sees `userScope` only. */
  #scoped<T>(userScope: string, fn: (tx: Tx) => Promise<T>): Promise<T> {
    return inTransaction(this.#pool, { readOnly: true, snapshot: true, scopes: [userScope] }, fn);
  }

  /** Ends the pool (idempotent; waits for queries in flight). */
  close(): Promise<void> {
    this.#closing ??= this.#pool.end();
    return this.#closing;
  }
}
