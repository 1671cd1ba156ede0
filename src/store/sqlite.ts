/**
 * The embedded memory store over an open SQLite database (see sqlite-open.ts for opening,
 * sqlite-statements.ts for its SQL).
 *
 * Recall: `queryTerms` (see terms.ts) → an FTS5 MATCH of quoted, scope-prefixed terms
 * joined with OR (see {@link scopePrefix}), with `m.user_scope = ?` (and categories) in
 * the same SQL WHERE clause — the scope is never a post-filter. At most
 * {@link MATCH_BUDGET} in-scope matches are scored by bm25, and only the best `poolSize`
 * (default 500) of them are fetched and fully scored (see score.ts), so the work per
 * recall is bounded whatever the store size; a memory outside that pool cannot be
 * recalled by this query even if it is very recent or important.
 */
import type Database from "better-sqlite3";
import { InvalidInputError } from "../errors/index.js";
import { instantMillis } from "../text/index.js";
import { rankRecall, rarestTerms } from "./recall-rank.js";
import {
  type MemoryRecord,
  type MemoryRecordInput,
  parseRecord,
  recordToJsonLine,
} from "./schema.js";
import { checkWeights, DEFAULT_WEIGHTS } from "./score.js";
import { importJsonlBatches } from "./sqlite-import.js";
import { ListOptionsSchema, parseNow, parseWith, RecallOptionsSchema } from "./sqlite-options.js";
import {
  jsonOrNull,
  matchExpression,
  prepareStatements,
  type Row,
  rowToRecord,
  type Statements,
  scopePrefix,
  writeRecord,
} from "./sqlite-statements.js";
import { queryTerms } from "./terms.js";
import type {
  AddResult,
  ImportOptions,
  ImportResult,
  JsonlInput,
  ListOptions,
  MemoryStore,
  RecallOptions,
  StoreRecallHit,
} from "./types.js";
import { scopeConflict, type WriteOutcome } from "./write-outcome.js";

/** The SQLite implementation of {@link MemoryStore}; methods are synchronous. */
export class SqliteMemoryStore implements MemoryStore {
  readonly path: string;
  readonly poolSize: number;
  readonly matchBudget: number;
  #db: Database.Database;
  #stmts: Statements;
  #writeMany: (records: readonly MemoryRecord[]) => WriteOutcome[];

  /** Use {@link openStore}. */
  constructor(path: string, db: Database.Database, poolSize: number, matchBudget: number) {
    this.path = path;
    this.poolSize = poolSize;
    this.matchBudget = matchBudget;
    this.#db = db;
    this.#stmts = prepareStatements(db);
    this.#writeMany = db.transaction((records: readonly MemoryRecord[]) => {
      const outcomes = records.map((r) => writeRecord(this.#stmts, r));
      const inserted = outcomes.filter((o) => o === "inserted").length;
      if (inserted > 0) this.#stmts.bumpCount.run(inserted);
      return outcomes;
    });
  }

  /** True until {@link close}. */
  get open(): boolean {
    return this.#db.open;
  }

  add(records: readonly MemoryRecordInput[], options: { now?: string } = {}): AddResult {
    if (!Array.isArray(records)) throw new InvalidInputError("records must be an array", "records");
    const now = parseNow(options.now);
    const parsed = records.map((r, i) => parseRecord(r, ["records", i], now));
    const result: AddResult = { inserted: 0, updated: 0 };
    this.#db.transaction(() => {
      this.#writeMany(parsed).forEach((outcome, i) => {
        if (outcome === "conflict") {
          // Throwing inside the transaction rolls the whole add back.
          throw scopeConflict(parsed[i]!, ["records", i, "userScope"]);
        }
        result[outcome]++;
      });
    })();
    return result;
  }

  async importJsonl(input: JsonlInput, options: ImportOptions = {}): Promise<ImportResult> {
    return importJsonlBatches(input, options, this.#writeMany);
  }

  exportJsonl(write: (chunk: string) => void): number {
    let n = 0;
    let buf = "";
    for (const row of this.#stmts.exportAll.iterate() as IterableIterator<Row>) {
      buf += `${recordToJsonLine(rowToRecord(row))}\n`;
      n++;
      if (buf.length >= 65_536) {
        write(buf);
        buf = "";
      }
    }
    if (buf !== "") write(buf);
    return n;
  }

  count(options: { userScope?: string } = {}): number {
    if (options.userScope === undefined) {
      return (this.#stmts.countAll.get() as { n: number }).n;
    }
    return (this.#stmts.countScope.get(options.userScope) as { n: number }).n;
  }

  get(memoryId: string): MemoryRecord | null {
    const row = this.#stmts.getOne.get(memoryId) as Row | undefined;
    return row === undefined ? null : rowToRecord(row);
  }

  list(options: ListOptions): MemoryRecord[] {
    const o = parseWith(ListOptionsSchema, options, "options");
    const cats = jsonOrNull(o.categories);
    const rows = (
      o.kinds === undefined
        ? this.#stmts.list.all({ scope: o.userScope, cats })
        : this.#stmts.listKinds.all({ scope: o.userScope, kinds: JSON.stringify(o.kinds), cats })
    ) as Row[];
    return rows.map(rowToRecord);
  }

  recall(query: string, options: RecallOptions): StoreRecallHit[] {
    if (typeof query !== "string") throw new InvalidInputError("query must be a string", "query");
    const o = parseWith(RecallOptionsSchema, options, "options");
    const weights = checkWeights(o.weights ?? DEFAULT_WEIGHTS, "options.weights");
    const asOfMs = instantMillis(o.asOf) as number;
    const terms = queryTerms(query);
    // Nothing searchable (empty, punctuation, emoji only): no evidence, so no hits.
    if (terms.length === 0) return [];
    const prefix = scopePrefix(o.userScope);
    const searched = this.#searchTerms(prefix, terms);
    const rows = this.#stmts.recall.all({
      match: matchExpression(prefix, searched),
      scope: o.userScope,
      cats: jsonOrNull(o.categories),
      budget: Math.max(this.matchBudget, this.poolSize, o.limit),
      pool: Math.max(this.poolSize, o.limit),
    }) as Array<Row & { bm25: number }>;
    return rankRecall(
      rows.map((r) => ({ record: rowToRecord(r), bm25: r.bm25 })),
      terms,
      { limit: o.limit, weights, asOfMs },
    );
  }

  /**
   * The query terms to search under {@link MATCH_BUDGET}: all of them when their in-scope
   * matches fit; else the rarest first (ties by code point) while the sum of their match
   * counts fits, and always at least the rarest. Counts stop at the budget, so this costs
   * at most a bounded index walk per term.
   */
  #searchTerms(prefix: string, terms: string[]): string[] {
    const budget = this.matchBudget;
    const count = (ts: readonly string[]) =>
      (this.#stmts.countMatches.get(matchExpression(prefix, ts), budget + 1) as { n: number }).n;
    if (terms.length === 1 || count(terms) <= budget) return terms;
    return rarestTerms(
      terms,
      terms.map((t) => count([t])),
      budget,
    );
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }
}
