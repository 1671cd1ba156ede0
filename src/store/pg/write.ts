/**
 * Batch writes of the PostgreSQL store: one transaction per batch, with the outcome of
 * each record as SQLite's `writeRecord` would report it (inserted or updated: a memory is
 * keyed by scope and id, so the same id in another scope is another memory).
 *
 * Per scope of the batch (in code-point order, so concurrent writers take row locks in
 * the same order), as that scope (one of the transaction's declared scopes): lock the
 * batch's ids that the scope already holds; then decide every record's outcome in input
 * order; insert the new ids (`ON CONFLICT DO NOTHING`: a concurrent writer of the scope
 * that inserted one first makes the transaction run again), replace the existing rows,
 * re-index (postings, document frequencies), bump the scope's counters (memories, index
 * terms) and the store-wide counters (each record written counts as an index row, as in
 * FTS5).
 */
import { createHash } from "node:crypto";
import { compareCodePoints, instantMillis } from "../../text/index.js";
import { type MemoryRow, rowToRecord } from "../row.js";
import { type MemoryRecord, recordToJsonLine } from "../schema.js";
import { recordTerms } from "../terms.js";
import type { PreparedWrite, StoreLimits } from "../write-gate.js";
import type { WriteOutcome } from "../write-outcome.js";
import { checkLimits } from "./limits.js";
import { RetryTransaction, type Tx } from "./tx.js";

/** Terms longer than this (UTF-8 bytes) are indexed by their hash (b-tree entry limit). */
export const MAX_TERM_BYTES = 256;

/**
 * The index key of a term: the term itself, or `#` + its SHA-256 when it is long (`#`
 * is never part of a term, so the two cannot collide).
 *
 * @example termKey("python") // "python"
 */
export function termKey(term: string): string {
  if (term.length * 3 <= MAX_TERM_BYTES || Buffer.byteLength(term, "utf8") <= MAX_TERM_BYTES) {
    return term;
  }
  return `#${createHash("sha256").update(term, "utf8").digest("hex")}`;
}

/** A record's index entry: distinct keys (first occurrence first), their counts, length. */
export interface IndexedTerms {
  keys: string[];
  tfs: number[];
  /** All terms, repeats included (bm25's |D|). */
  length: number;
}

/** The index entry of a record: terms of content, summary and tags (as SQLite indexes). */
export function indexRecord(r: MemoryRecord): IndexedTerms {
  const all = recordTerms(r);
  const counts = new Map<string, number>();
  for (const t of all) {
    const k = termKey(t);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return { keys: [...counts.keys()], tfs: [...counts.values()], length: all.length };
}

/** What one scope of the batch holds already, by memoryId. */
type Held = Map<
  string,
  { id: string; keys: string[]; status: "active" | "quarantined"; version: number }
>;

/** The index entry of a quarantined record: none (it is never recalled). */
const UNINDEXED: IndexedTerms = { keys: [], tfs: [], length: 0 };

/** The index entry of a write: its terms when active, none when quarantined. */
export function indexWrite(w: PreparedWrite): IndexedTerms {
  return w.status === "active" ? indexRecord(w.record) : UNINDEXED;
}

const MEMORY_COLUMNS = `kind, category, tags, content, summary, importance, conflict_key,
  authority, source_id, source_type, source_title, captured_at, stored_at, terms, status,
  gate_rule, version, stored_ms, bytes`;
const UNNEST_TYPES = `$2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
  $7::float8[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[],
  $14::text[], $15::text[], $16::text[], $17::text[], $18::int4[], $19::int8[], $20::int4[]`;

/** The column arrays of `finals` in {@link MEMORY_COLUMNS} order. */
function columnArrays(finals: readonly Final[]) {
  const records = finals.map((f) => f.write.record);
  const index = finals.map((f) => f.index);
  return [
    records.map((r) => r.kind),
    records.map((r) => r.category),
    records.map((r) => JSON.stringify(r.tags)),
    records.map((r) => r.content),
    records.map((r) => r.summary),
    records.map((r) => r.importance),
    records.map((r) => r.conflictKey),
    records.map((r) => r.authority),
    records.map((r) => r.source.sourceId),
    records.map((r) => r.source.sourceType),
    records.map((r) => r.source.title),
    records.map((r) => r.source.capturedAt),
    records.map((r) => r.storedAt),
    index.map((x) => x.keys.join(" ")),
    finals.map((f) => f.write.status),
    finals.map((f) => f.write.rule),
    finals.map((f) => f.version),
    records.map((r) => instantMillis(r.storedAt) ?? 0),
    finals.map((f) => f.write.bytes),
  ];
}

/** The scope's id, creating its row on first use. */
async function scopeId(tx: Tx, userScope: string): Promise<number> {
  await tx.query(
    "INSERT INTO promptctx_scopes (user_scope) VALUES ($1) ON CONFLICT (user_scope) DO NOTHING",
    [userScope],
  );
  const rows = await tx.query<{ scope_id: number }>(
    "SELECT scope_id FROM promptctx_scopes WHERE user_scope = $1",
    [userScope],
  );
  if (rows[0] === undefined) throw new RetryTransaction("scope row not visible yet");
  return rows[0].scope_id;
}

/** Locks and returns the rows of `ids` that the scope holds. */
async function lockHeld(tx: Tx, userScope: string, ids: readonly string[]): Promise<Held> {
  const rows = await tx.query<{
    id: string;
    memory_id: string;
    terms: string;
    status: "active" | "quarantined";
    version: number;
  }>(
    `SELECT id, memory_id, terms, status, version FROM promptctx_memories
     WHERE user_scope = $1 AND memory_id = ANY($2::text[])
     ORDER BY memory_id FOR UPDATE`,
    [userScope, ids],
  );
  return new Map(
    rows.map((r) => [
      r.memory_id,
      {
        id: r.id,
        keys: r.terms === "" ? [] : r.terms.split(" "),
        status: r.status,
        version: r.version,
      },
    ]),
  );
}

/**
 * Every record's outcome, in input order, as sequential writes would have it: an id its
 * scope holds (or wrote earlier in the batch) is updated, any other is inserted — the
 * same id in another scope is another memory.
 */
function decideOutcomes(records: readonly MemoryRecord[], held: Map<string, Held>): WriteOutcome[] {
  const seen = new Map<string, Set<string>>();
  return records.map((r) => {
    let ids = seen.get(r.userScope);
    if (ids === undefined) {
      ids = new Set(held.get(r.userScope)?.keys());
      seen.set(r.userScope, ids);
    }
    if (ids.has(r.memoryId)) return "updated";
    ids.add(r.memoryId);
    return "inserted";
  });
}

/** The last write of an id in the batch, its index entry, and the writes before it. */
interface Final {
  write: PreparedWrite;
  index: IndexedTerms;
  isNew: boolean;
  /** The version this write becomes. */
  version: number;
  /** Earlier writes of the id in the same batch (each becomes a version, as in SQLite). */
  earlier: PreparedWrite[];
}

/** One scope's part of the batch: the last version of each id it writes. */
interface ScopeWrite {
  userScope: string;
  finals: Map<string, Final>;
}

/** Inserts the scope's new ids; returns the row ids of those inserted, by memoryId. */
async function insertNew(tx: Tx, w: ScopeWrite): Promise<Map<string, string>> {
  const fresh = [...w.finals.values()].filter((f) => f.isNew);
  if (fresh.length === 0) return new Map();
  const rows = await tx.query<{ id: string; memory_id: string }>(
    `INSERT INTO promptctx_memories (memory_id, user_scope, ${MEMORY_COLUMNS})
     SELECT u.memory_id, $21, u.kind, u.category, u.tags, u.content, u.summary, u.importance,
       u.conflict_key, u.authority, u.source_id, u.source_type, u.source_title, u.captured_at,
       u.stored_at, u.terms, u.status, u.gate_rule, u.version, u.stored_ms, u.bytes
     FROM unnest($1::text[], ${UNNEST_TYPES})
       AS u(memory_id, ${MEMORY_COLUMNS})
     ON CONFLICT (user_scope, memory_id) DO NOTHING
     RETURNING id, memory_id`,
    [fresh.map((f) => f.write.record.memoryId), ...columnArrays(fresh), w.userScope],
  );
  return new Map(rows.map((r) => [r.memory_id, r.id]));
}

/** Replaces the rows of the scope's ids that existed. */
async function updateHeld(tx: Tx, w: ScopeWrite, held: Held): Promise<void> {
  const kept = [...w.finals.values()].filter((f) => !f.isNew);
  if (kept.length === 0) return;
  const records = kept.map((f) => f.write.record);
  const sets = MEMORY_COLUMNS.split(",")
    .map((c) => c.trim())
    .map((c) => `${c} = u.${c}`)
    .join(", ");
  await tx.query(
    `UPDATE promptctx_memories m SET ${sets}
     FROM unnest($1::int8[], ${UNNEST_TYPES}) AS u(id, ${MEMORY_COLUMNS})
     WHERE m.id = u.id AND m.user_scope = $21`,
    [records.map((r) => held.get(r.memoryId)!.id), ...columnArrays(kept), w.userScope],
  );
}

/**
 * Keeps the versions a batch replaces: each held row as it is (before its update), and the
 * earlier writes of an id within the batch.
 */
async function saveVersions(tx: Tx, w: ScopeWrite, held: Held): Promise<void> {
  const v = {
    ids: [] as string[],
    versions: [] as number[],
    records: [] as string[],
    statuses: [] as string[],
    rules: [] as Array<string | null>,
    ms: [] as number[],
    bytes: [] as number[],
  };
  const keptIds: string[] = [];
  for (const [memoryId, f] of w.finals) {
    const prior = held.get(memoryId);
    if (!f.isNew && prior !== undefined) keptIds.push(prior.id);
    const first = f.isNew ? 1 : (prior?.version ?? 0) + 1;
    f.earlier.forEach((e, k) => {
      v.ids.push(memoryId);
      v.versions.push(first + k);
      v.records.push(recordToJsonLine(e.record));
      v.statuses.push(e.status);
      v.rules.push(e.rule);
      v.ms.push(instantMillis(e.record.storedAt) ?? 0);
      v.bytes.push(e.bytes);
    });
  }
  if (keptIds.length > 0) {
    const rows = await tx.query<
      MemoryRow & {
        version: number;
        status: string;
        gate_rule: string | null;
        stored_ms: string;
        bytes: number;
      }
    >(
      `SELECT memory_id, user_scope, kind, category, tags, content, summary, importance,
         conflict_key, authority, source_id, source_type, source_title, captured_at, stored_at,
         version, status, gate_rule, stored_ms, bytes
       FROM promptctx_memories WHERE user_scope = $1 AND id = ANY($2::int8[])`,
      [w.userScope, keptIds],
    );
    for (const r of rows) {
      v.ids.push(r.memory_id);
      v.versions.push(r.version);
      v.records.push(recordToJsonLine(rowToRecord(r)));
      v.statuses.push(r.status);
      v.rules.push(r.gate_rule);
      v.ms.push(Number(r.stored_ms));
      v.bytes.push(r.bytes);
    }
  }
  if (v.ids.length > 0) {
    await tx.query(
      `INSERT INTO promptctx_memory_versions (user_scope, memory_id, version, record, status,
         gate_rule, stored_ms, bytes)
       SELECT $1, * FROM unnest($2::text[], $3::int4[], $4::text[], $5::text[], $6::text[],
         $7::int8[], $8::int4[])`,
      [w.userScope, v.ids, v.versions, v.records, v.statuses, v.rules, v.ms, v.bytes],
    );
  }
}

/** The batch's writes of one scope, grouped; ids in code-point order. */
function groupWrites(
  writes: readonly PreparedWrite[],
  index: readonly IndexedTerms[],
  held: Map<string, Held>,
): ScopeWrite[] {
  const byScope = new Map<string, ScopeWrite>();
  writes.forEach((write, i) => {
    const record = write.record;
    let w = byScope.get(record.userScope);
    if (w === undefined) {
      w = { userScope: record.userScope, finals: new Map() };
      byScope.set(record.userScope, w);
    }
    const prior = held.get(record.userScope)?.get(record.memoryId);
    const before = w.finals.get(record.memoryId);
    const earlier = before === undefined ? [] : [...before.earlier, before.write];
    const version = (prior?.version ?? 0) + earlier.length + 1;
    w.finals.set(record.memoryId, {
      write,
      index: index[i]!,
      isNew: prior === undefined,
      version,
      earlier,
    });
  });
  for (const w of byScope.values()) {
    w.finals = new Map([...w.finals].sort(([a], [b]) => compareCodePoints(a, b)));
  }
  return [...byScope.values()].sort((a, b) => compareCodePoints(a.userScope, b.userScope));
}

/** Adds `d` to `key`'s entry of `delta`. */
function bump(delta: Map<string, number>, key: string, d: number): void {
  delta.set(key, (delta.get(key) ?? 0) + d);
}

/**
 * Re-indexes the scope's written rows: drops the postings of replaced versions, adds the
 * new ones, and applies the net change of each term's document frequency (terms in
 * code-point order: concurrent writers lock them in the same order). Returns the net
 * change of the scope's index terms (repeats included: the scope's `term_count`).
 */
async function reindex(
  tx: Tx,
  scope: number,
  w: ScopeWrite,
  held: Held,
  inserted: ReadonlyMap<string, string>,
): Promise<number> {
  let termChange = 0;
  const delta = new Map<string, number>();
  const old = { terms: [] as string[], ids: [] as string[] };
  const add = {
    terms: [] as string[],
    ids: [] as string[],
    tfs: [] as number[],
    lens: [] as number[],
  };
  for (const [memoryId, f] of w.finals) {
    const prior = held.get(memoryId);
    const id = f.isNew ? inserted.get(memoryId) : prior?.id;
    if (id === undefined) continue; // not inserted: another scope holds the id
    termChange += f.index.length;
    for (const k of f.isNew ? [] : (prior?.keys ?? [])) {
      old.terms.push(k);
      old.ids.push(id);
      bump(delta, k, -1);
    }
    f.index.keys.forEach((k, j) => {
      add.terms.push(k);
      add.ids.push(id);
      add.tfs.push(f.index.tfs[j]!);
      add.lens.push(f.index.length);
      bump(delta, k, 1);
    });
  }
  if (old.terms.length > 0) {
    // Every posting of a row carries the row's length: the replaced versions' lengths.
    const gone = await tx.query<{ id: string; doc_len: number }>(
      `DELETE FROM promptctx_postings p USING unnest($2::text[], $3::int8[]) AS d(term, id)
       WHERE p.scope_id = $1 AND p.term = d.term AND p.id = d.id
       RETURNING p.id, p.doc_len`,
      [scope, old.terms, old.ids],
    );
    for (const len of new Map(gone.map((g) => [g.id, g.doc_len])).values()) termChange -= len;
  }
  if (add.terms.length > 0) {
    await tx.query(
      `INSERT INTO promptctx_postings (scope_id, term, id, tf, doc_len)
       SELECT $1, * FROM unnest($2::text[], $3::int8[], $4::int4[], $5::int4[])`,
      [scope, add.terms, add.ids, add.tfs, add.lens],
    );
  }
  const changed = [...delta].filter(([, d]) => d !== 0).sort(([a], [b]) => compareCodePoints(a, b));
  if (changed.length > 0) {
    await tx.query(
      `INSERT INTO promptctx_terms (scope_id, term, df)
       SELECT $1, * FROM unnest($2::text[], $3::int4[])
       ON CONFLICT (scope_id, term) DO UPDATE SET df = promptctx_terms.df + EXCLUDED.df`,
      [scope, changed.map(([k]) => k), changed.map(([, d]) => d)],
    );
  }
  return termChange;
}

/**
 * Adds a batch's changes to the scope's counters (what recall's BM25 statistics read:
 * memories, and index terms for the average length), in the batch's transaction.
 */
async function bumpScopeCounts(
  tx: Tx,
  scope: number,
  memories: number,
  terms: number,
): Promise<void> {
  if (memories === 0 && terms === 0) return;
  await tx.query(
    `UPDATE promptctx_scopes SET memory_count = memory_count + $2, term_count = term_count + $3
     WHERE scope_id = $1`,
    [scope, memories, terms],
  );
}

/**
 * A new id of `w` that was not inserted: a concurrent writer of the scope inserted it
 * first, so the transaction is run again (it then updates).
 */
function settleLost(w: ScopeWrite, inserted: ReadonlyMap<string, string>): void {
  for (const [id, f] of w.finals) {
    if (f.isNew && !inserted.has(id)) throw new RetryTransaction("an id was inserted concurrently");
  }
}

/** The change in the scope's active (recalled) memories that its part of the batch makes. */
function activeChange(w: ScopeWrite, held: Held): number {
  let d = 0;
  for (const [memoryId, f] of w.finals) {
    const before = held.get(memoryId)?.status === "active" ? 1 : 0;
    d += (f.write.status === "active" ? 1 : 0) - before;
  }
  return d;
}

/**
 * The scopes a batch writes, in code-point order (the transaction declares them).
 *
 * @example batchScopes([{ userScope: "b" }, { userScope: "a" }, { userScope: "b" }] as never) // ["a", "b"]
 */
export function batchScopes(records: readonly MemoryRecord[]): string[] {
  return [...new Set(records.map((r) => r.userScope))].sort(compareCodePoints);
}

/**
 * Writes `records` inside `tx` (the caller's transaction, which declared
 * {@link batchScopes}); the outcome of each, in order.
 */
export async function writeBatch(
  tx: Tx,
  writes: readonly PreparedWrite[],
  limits: StoreLimits = {},
): Promise<WriteOutcome[]> {
  const records = writes.map((w) => w.record);
  const scopes = batchScopes(records);
  const held = new Map<string, Held>();
  for (const s of scopes) {
    await tx.setScope(s);
    const ids = [...new Set(records.filter((r) => r.userScope === s).map((r) => r.memoryId))];
    held.set(s, await lockHeld(tx, s, ids));
  }
  const outcomes = decideOutcomes(records, held);
  await checkLimits(tx, scopes, writes, outcomes, limits);
  const index = writes.map(indexWrite);
  for (const w of groupWrites(writes, index, held)) {
    const mine = held.get(w.userScope)!;
    await tx.setScope(w.userScope);
    const scope = await scopeId(tx, w.userScope);
    await saveVersions(tx, w, mine);
    const inserted = await insertNew(tx, w);
    settleLost(w, inserted);
    await updateHeld(tx, w, mine);
    const terms = await reindex(tx, scope, w, mine, inserted);
    await bumpScopeCounts(tx, scope, activeChange(w, mine), terms);
  }
  let memories = 0;
  let rows = 0;
  let tokens = 0;
  outcomes.forEach((o, i) => {
    if (o === "inserted") memories++;
    rows++;
    tokens += index[i]!.length;
  });
  if (rows > 0) {
    // Through the owner's function: the connecting role cannot read the store-wide counters.
    await tx.query("SELECT promptctx_add_stats($1, $2, $3)", [memories, rows, tokens]);
  }
  return outcomes;
}
