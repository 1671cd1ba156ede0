/**
 * The PostgreSQL store's management of stored memories (the SQLite store's manage.ts, over
 * the same contract): entries, pages, history, approve, forget, and the versions a recall
 * into the past reads. Every statement runs in a transaction that declared the one scope it
 * touches (row-level security sees no other), with the scope in its predicate too.
 *
 * Forget deletes the memory rows, their versions, their postings and the index terms no
 * memory of the scope holds any more, in one transaction (all or nothing), then asks for a
 * `VACUUM` of the store's tables — which only the owner role may run (PostgreSQL skips it,
 * with a warning, for the app role): until a vacuum, the deleted tuples stay in the table
 * files (docs/security.md says what "gone" means there).
 */

import type { Pool } from "pg";
import type { TakeoverRule } from "../../memory/index.js";
import { compareCodePoints } from "../../text/index.js";
import type { EntryPageQuery } from "../options.js";
import { type MemoryRow, rowToRecord } from "../row.js";
import { parseRecord } from "../schema.js";
import type { StoredVersion } from "../snapshot.js";
import type { EntryPage, ForgetResult, MemoryEntry, MemoryVersion } from "../types.js";
import type { MemoryStatus } from "../write-gate.js";
import { inTransaction, type Tx } from "./tx.js";
import { indexRecord } from "./write.js";

/** The columns of an entry. */
export const ENTRY_COLUMNS = `id, memory_id, user_scope, kind, category, tags, content, summary,
  importance, conflict_key, authority, source_id, source_type, source_title, captured_at,
  stored_at, status, gate_rule, version, stored_ms, terms`;

interface EntryRow extends MemoryRow {
  id: string;
  status: MemoryStatus;
  gate_rule: string | null;
  version: number;
  stored_ms: string;
  terms: string;
}

interface VersionRow {
  memory_id: string;
  version: number;
  record: string;
  status: MemoryStatus;
  gate_rule: string | null;
  stored_ms: string;
}

function toEntry(r: EntryRow): MemoryEntry {
  return {
    ...rowToRecord(r),
    status: r.status,
    rule: r.gate_rule as TakeoverRule | null,
    version: r.version,
  };
}

const STORE_TABLES =
  "promptctx_memories, promptctx_memory_versions, promptctx_postings, promptctx_terms";

/** The management operations over a pool (see the module notes). */
export class PgManage {
  readonly #pool: Pool;

  constructor(pool: Pool) {
    this.#pool = pool;
  }

  #read<T>(userScope: string, fn: (tx: Tx) => Promise<T>): Promise<T> {
    return inTransaction(this.#pool, { readOnly: true, snapshot: true, scopes: [userScope] }, fn);
  }

  #write<T>(userScope: string, fn: (tx: Tx) => Promise<T>): Promise<T> {
    return inTransaction(this.#pool, { scopes: [userScope] }, fn);
  }

  page(o: EntryPageQuery): Promise<EntryPage> {
    return this.#read(o.userScope, async (tx) => {
      const rows = await tx.query<EntryRow>(
        `SELECT ${ENTRY_COLUMNS} FROM promptctx_memories
         WHERE user_scope = $1 AND ($2::text IS NULL OR status = $2)
           AND ($3::text IS NULL OR memory_id > $3)
           AND ($4::text[] IS NULL OR kind = ANY($4::text[]))
           AND ($5::text[] IS NULL OR category = ANY($5::text[]))
         ORDER BY memory_id LIMIT $6`,
        [
          o.userScope,
          o.status === "all" ? null : o.status,
          o.after ?? null,
          o.kinds ?? null,
          o.categories ?? null,
          o.limit + 1,
        ],
      );
      const entries = rows.slice(0, o.limit).map(toEntry);
      return {
        entries,
        next: rows.length > o.limit ? entries[entries.length - 1]!.memoryId : null,
      };
    });
  }

  async #one(tx: Tx, memoryId: string, userScope: string, lock = false): Promise<EntryRow | null> {
    const rows = await tx.query<EntryRow>(
      `SELECT ${ENTRY_COLUMNS} FROM promptctx_memories WHERE user_scope = $1 AND memory_id = $2
       ${lock ? "FOR UPDATE" : ""}`,
      [userScope, memoryId],
    );
    return rows[0] ?? null;
  }

  entry(memoryId: string, userScope: string): Promise<MemoryEntry | null> {
    return this.#read(userScope, async (tx) => {
      const row = await this.#one(tx, memoryId, userScope);
      return row === null ? null : toEntry(row);
    });
  }

  history(memoryId: string, userScope: string): Promise<MemoryVersion[]> {
    return this.#read(userScope, async (tx) => {
      const row = await this.#one(tx, memoryId, userScope);
      if (row === null) return [];
      const old = await tx.query<VersionRow>(
        `SELECT memory_id, version, record, status, gate_rule, stored_ms
         FROM promptctx_memory_versions WHERE user_scope = $1 AND memory_id = $2
         ORDER BY version`,
        [userScope, memoryId],
      );
      const current = rowToRecord(row);
      return [
        ...old.map((v) => {
          const record = parseRecord(JSON.parse(v.record), ["record"]);
          return {
            version: v.version,
            storedAt: record.storedAt,
            status: v.status,
            rule: v.gate_rule as TakeoverRule | null,
            current: false,
            record,
          };
        }),
        {
          version: row.version,
          storedAt: current.storedAt,
          status: row.status,
          rule: row.gate_rule as TakeoverRule | null,
          current: true,
          record: current,
        },
      ];
    });
  }

  approve(memoryId: string, userScope: string): Promise<MemoryEntry | null> {
    return this.#write(userScope, async (tx) => {
      const row = await this.#one(tx, memoryId, userScope, true);
      if (row === null) return null;
      if (row.status === "active") return toEntry(row);
      const record = rowToRecord(row);
      const index = indexRecord(record);
      const scope = await scopeIdOf(tx, userScope);
      await tx.query(
        `UPDATE promptctx_memories SET status = 'active', gate_rule = NULL, terms = $3
         WHERE user_scope = $1 AND id = $2`,
        [userScope, row.id, index.keys.join(" ")],
      );
      if (index.keys.length > 0) {
        await tx.query(
          `INSERT INTO promptctx_postings (scope_id, term, id, tf, doc_len)
           SELECT $1, u.term, $2, u.tf, $4 FROM unnest($3::text[], $5::int4[]) AS u(term, tf)`,
          [scope, row.id, index.keys, index.length, index.tfs],
        );
        const sorted = [...index.keys].sort(compareCodePoints);
        await tx.query(
          `INSERT INTO promptctx_terms (scope_id, term, df)
           SELECT $1, t, 1 FROM unnest($2::text[]) AS t
           ON CONFLICT (scope_id, term) DO UPDATE SET df = promptctx_terms.df + 1`,
          [scope, sorted],
        );
      }
      await tx.query(
        `UPDATE promptctx_scopes SET memory_count = memory_count + 1,
           term_count = term_count + $2 WHERE scope_id = $1`,
        [scope, index.length],
      );
      const after = await this.#one(tx, memoryId, userScope);
      return after === null ? null : toEntry(after);
    });
  }

  async forget(
    userScope: string,
    which: { memoryId: string } | { kinds?: readonly string[]; categories?: readonly string[] },
  ): Promise<ForgetResult> {
    const byId = "memoryId" in which;
    const result = await this.#write(userScope, async (tx): Promise<ForgetResult> => {
      const rows = await tx.query<{ id: string; memory_id: string; status: string; terms: string }>(
        `SELECT id, memory_id, status, terms FROM promptctx_memories
         WHERE user_scope = $1 AND ($2::text IS NULL OR memory_id = $2)
           AND ($3::text[] IS NULL OR kind = ANY($3::text[]))
           AND ($4::text[] IS NULL OR category = ANY($4::text[]))
         ORDER BY memory_id FOR UPDATE`,
        [
          userScope,
          byId ? which.memoryId : null,
          !byId ? (which.kinds ?? null) : null,
          !byId ? (which.categories ?? null) : null,
        ],
      );
      if (rows.length === 0) return { memories: 0, removed: 0 };
      const ids = rows.map((r) => r.id);
      const memoryIds = rows.map((r) => r.memory_id);
      const scope = await scopeIdOf(tx, userScope);
      const gone = await tx.query<{ id: string; doc_len: number }>(
        `DELETE FROM promptctx_postings WHERE scope_id = $1 AND id = ANY($2::int8[])
         RETURNING id, doc_len`,
        [scope, ids],
      );
      const termCount = [...new Map(gone.map((g) => [g.id, g.doc_len])).values()].reduce(
        (a, b) => a + b,
        0,
      );
      const df = new Map<string, number>();
      for (const r of rows) {
        if (r.status !== "active" || r.terms === "") continue;
        for (const k of r.terms.split(" ")) df.set(k, (df.get(k) ?? 0) + 1);
      }
      const terms = [...df].sort(([a], [b]) => compareCodePoints(a, b));
      if (terms.length > 0) {
        await tx.query(
          `UPDATE promptctx_terms t SET df = t.df - u.d
           FROM unnest($2::text[], $3::int4[]) AS u(term, d)
           WHERE t.scope_id = $1 AND t.term = u.term`,
          [scope, terms.map(([k]) => k), terms.map(([, d]) => d)],
        );
      }
      const versions = await tx.query<{ n: string }>(
        `WITH d AS (DELETE FROM promptctx_memory_versions
           WHERE user_scope = $1 AND memory_id = ANY($2::text[]) RETURNING 1)
         SELECT count(*)::text AS n FROM d`,
        [userScope, memoryIds],
      );
      // The rows, and the index terms no memory of the scope holds any more (the owner's
      // function: the app role has no DELETE on those tables).
      await tx.query("SELECT promptctx_delete_memories($1::int8[], $2::text[])", [
        ids,
        terms.map(([k]) => k),
      ]);
      const active = rows.filter((r) => r.status === "active").length;
      await tx.query(
        `UPDATE promptctx_scopes SET memory_count = memory_count - $2,
           term_count = term_count - $3 WHERE scope_id = $1`,
        [scope, active, termCount],
      );
      await tx.query("SELECT promptctx_add_stats($1, $2, $3)", [-rows.length, 0, 0]);
      return { memories: rows.length, removed: rows.length + Number(versions[0]?.n ?? 0) };
    });
    if (result.memories > 0) await this.#vacuum();
    return result;
  }

  /** VACUUM of the store's tables: the owner's connection runs it; PostgreSQL skips it for others. */
  async #vacuum(): Promise<void> {
    const c = await this.#pool.connect();
    try {
      c.on("notice", () => {}); // "skipping … only table or database owner can vacuum it"
      await c.query(`VACUUM ${STORE_TABLES}`);
    } catch {
      // Best effort: the rows are gone either way; the next autovacuum reclaims them.
    } finally {
      c.release();
    }
  }

  /** The latest write time (ms) of the scope's replaced memories, or null. */
  latestWrite(userScope: string): Promise<number | null> {
    return this.#read(userScope, async (tx) => {
      const rows = await tx.query<{ ms: string | null }>(
        "SELECT max(stored_ms)::text AS ms FROM promptctx_memories WHERE user_scope = $1 AND version > 1",
        [userScope],
      );
      const ms = rows[0]?.ms ?? null;
      return ms === null ? null : Number(ms);
    });
  }

  /** Every version of every memory of the scope. */
  versions(userScope: string): Promise<StoredVersion[]> {
    return this.#read(userScope, async (tx) => {
      const rows = await tx.query<EntryRow>(
        `SELECT ${ENTRY_COLUMNS} FROM promptctx_memories WHERE user_scope = $1`,
        [userScope],
      );
      const old = await tx.query<VersionRow>(
        `SELECT memory_id, version, record, status, gate_rule, stored_ms
         FROM promptctx_memory_versions WHERE user_scope = $1`,
        [userScope],
      );
      return [
        ...rows.map((r) => ({
          version: r.version,
          storedMs: Number(r.stored_ms),
          status: r.status,
          record: rowToRecord(r),
        })),
        ...old.map((v) => ({
          version: v.version,
          storedMs: Number(v.stored_ms),
          status: v.status,
          record: parseRecord(JSON.parse(v.record), ["record"]),
        })),
      ];
    });
  }
}

/** The scope's id (its row exists once a memory of it was written). */
async function scopeIdOf(tx: Tx, userScope: string): Promise<number> {
  const rows = await tx.query<{ scope_id: number }>(
    "SELECT scope_id FROM promptctx_scopes WHERE user_scope = $1",
    [userScope],
  );
  return rows[0]?.scope_id ?? -1;
}
