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
import { compareCodePoints } from "../../text/index.js";
import type { MemoryRecord } from "../schema.js";
import { recordTerms } from "../terms.js";
import type { WriteOutcome } from "../write-outcome.js";
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

/** What one scope of the batch holds already: row id and indexed keys, by memoryId. */
type Held = Map<string, { id: string; keys: string[] }>;

const MEMORY_COLUMNS = `kind, category, tags, content, summary, importance, conflict_key,
  authority, source_id, source_type, source_title, captured_at, stored_at, terms`;
const UNNEST_TYPES = `$2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
  $7::float8[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[],
  $14::text[], $15::text[]`;

/** The column arrays of `records` in {@link MEMORY_COLUMNS} order. */
function columnArrays(records: readonly MemoryRecord[], index: readonly IndexedTerms[]) {
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
  const rows = await tx.query<{ id: string; memory_id: string; terms: string }>(
    `SELECT id, memory_id, terms FROM promptctx_memories
     WHERE user_scope = $1 AND memory_id = ANY($2::text[])
     ORDER BY memory_id FOR UPDATE`,
    [userScope, ids],
  );
  return new Map(
    rows.map((r) => [r.memory_id, { id: r.id, keys: r.terms === "" ? [] : r.terms.split(" ") }]),
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

/** One scope's part of the batch: the last version of each id it writes. */
interface ScopeWrite {
  userScope: string;
  finals: Map<string, { record: MemoryRecord; index: IndexedTerms; isNew: boolean }>;
}

/** Inserts the scope's new ids; returns the row ids of those inserted, by memoryId. */
async function insertNew(tx: Tx, w: ScopeWrite): Promise<Map<string, string>> {
  const fresh = [...w.finals.values()].filter((f) => f.isNew);
  if (fresh.length === 0) return new Map();
  const records = fresh.map((f) => f.record);
  const rows = await tx.query<{ id: string; memory_id: string }>(
    `INSERT INTO promptctx_memories (memory_id, user_scope, ${MEMORY_COLUMNS})
     SELECT u.memory_id, $16, u.kind, u.category, u.tags, u.content, u.summary, u.importance,
       u.conflict_key, u.authority, u.source_id, u.source_type, u.source_title, u.captured_at,
       u.stored_at, u.terms
     FROM unnest($1::text[], ${UNNEST_TYPES})
       AS u(memory_id, ${MEMORY_COLUMNS})
     ON CONFLICT (user_scope, memory_id) DO NOTHING
     RETURNING id, memory_id`,
    [
      records.map((r) => r.memoryId),
      ...columnArrays(
        records,
        fresh.map((f) => f.index),
      ),
      w.userScope,
    ],
  );
  return new Map(rows.map((r) => [r.memory_id, r.id]));
}

/** Replaces the rows of the scope's ids that existed. */
async function updateHeld(tx: Tx, w: ScopeWrite, held: Held): Promise<void> {
  const kept = [...w.finals.values()].filter((f) => !f.isNew);
  if (kept.length === 0) return;
  const records = kept.map((f) => f.record);
  const sets = MEMORY_COLUMNS.split(",")
    .map((c) => c.trim())
    .map((c) => `${c} = u.${c}`)
    .join(", ");
  await tx.query(
    `UPDATE promptctx_memories m SET ${sets}
     FROM unnest($1::int8[], ${UNNEST_TYPES}) AS u(id, ${MEMORY_COLUMNS})
     WHERE m.id = u.id AND m.user_scope = $16`,
    [
      records.map((r) => held.get(r.memoryId)!.id),
      ...columnArrays(
        records,
        kept.map((f) => f.index),
      ),
      w.userScope,
    ],
  );
}

/** The batch's writes of one scope, grouped; ids in code-point order. */
function groupWrites(
  records: readonly MemoryRecord[],
  index: readonly IndexedTerms[],
  held: Map<string, Held>,
): ScopeWrite[] {
  const byScope = new Map<string, ScopeWrite>();
  records.forEach((record, i) => {
    let w = byScope.get(record.userScope);
    if (w === undefined) {
      w = { userScope: record.userScope, finals: new Map() };
      byScope.set(record.userScope, w);
    }
    const isNew = !held.get(record.userScope)?.has(record.memoryId);
    w.finals.set(record.memoryId, { record, index: index[i]!, isNew });
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
  records: readonly MemoryRecord[],
): Promise<WriteOutcome[]> {
  const scopes = batchScopes(records);
  const held = new Map<string, Held>();
  for (const s of scopes) {
    await tx.setScope(s);
    const ids = [...new Set(records.filter((r) => r.userScope === s).map((r) => r.memoryId))];
    held.set(s, await lockHeld(tx, s, ids));
  }
  const outcomes = decideOutcomes(records, held);
  const index = records.map(indexRecord);
  for (const w of groupWrites(records, index, held)) {
    const mine = held.get(w.userScope)!;
    await tx.setScope(w.userScope);
    const scope = await scopeId(tx, w.userScope);
    const inserted = await insertNew(tx, w);
    settleLost(w, inserted);
    await updateHeld(tx, w, mine);
    const terms = await reindex(tx, scope, w, mine, inserted);
    await bumpScopeCounts(tx, scope, inserted.size, terms);
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
