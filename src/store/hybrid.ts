/**
 * Hybrid recall: full-text and vector candidates of one scope fused (fuse.ts), over a
 * store of either dialect (its {@link VectorIndex}: sqlite/vectors.ts, pg/vectors.ts) and
 * an embedder (../embed). {@link HybridMemoryStore} implements {@link MemoryStore}
 * asynchronously:
 *
 * - writes store the records (one transaction, as the plain store), then embed what
 *   they changed in the embedder's batches; a batch whose embedding fails leaves its
 *   records **pending** (stored, found by full-text) and the failure is reported in the
 *   result (`embedError`), never thrown after the records are committed;
 * - `recall` searches both paths in the scope only: the store's full-text pool and the
 *   scope's nearest vectors (exact, in both dialects), then ranks
 *   by the calibrated total (fuse.ts). A query the embedder does not cover (a script its
 *   vocabulary lacks, e.g. Chinese for USE lite) is served by full-text alone;
 * - {@link HybridMemoryStore.reembed} fills pending vectors, or migrates the store to the
 *   embedder (`migrate: true`), in batches, resumably.
 *
 * Opening checks the store's recorded embedder: another one is `embedder_mismatch`. A
 * store that cannot search vectors (PostgreSQL without pgvector) recalls by words only,
 * leaves writes pending and says so in {@link HybridMemoryStore.hints}.
 */
import type { Embedder } from "../embed/index.js";
import { InvalidInputError, PromptctxError, toErrorObject } from "../errors/index.js";
import { parseInstant } from "../text/index.js";
import { type HitMatch, rrf, type SemanticCalibration, semanticRelevance } from "./fuse.js";
import type { Hint } from "./hints.js";
import { recallHit } from "./hits.js";
import { readLines } from "./jsonl.js";
import { parseNow, parseWith, RecallOptionsSchema } from "./options.js";
import { type MemoryRecord, type MemoryRecordInput, parseRecord } from "./schema.js";
import {
  checkWeights,
  compareRecall,
  DEFAULT_WEIGHTS,
  round6,
  type ScoreBreakdown,
  type ScoreWeights,
  scoreBreakdown,
} from "./score.js";
import type { SqliteMemoryStore } from "./sqlite/store.js";
import type {
  AddOptions,
  AddResult,
  ForgetTarget,
  GetOptions,
  ImportOptions,
  ImportResult,
  JsonlInput,
  ListEntriesOptions,
  ListOptions,
  MemoryStore,
  RecallOptions,
  StoreRecallHit,
} from "./types.js";
import type { PendingVector, VectorBase, VectorHit } from "./vectors.js";

/** An import's result when nothing could be embedded (no vector search): nothing pending. */
function result0<T>(r: T): T & EmbedReport {
  return { ...r, embedded: 0, pending: 0 };
}

/**
 * The lines of `input` as they are read, collecting each line's `userScope` into `scopes`
 * (lines that do not parse are the import's to report).
 */
async function* scopesOf(input: JsonlInput, scopes: Set<string>): AsyncGenerator<string> {
  for await (const { text } of readLines(input)) {
    try {
      const r = JSON.parse(text) as { userScope?: unknown };
      if (typeof r.userScope === "string") scopes.add(r.userScope);
    } catch {
      // not JSON: the import reports the line
    }
    yield `${text}\n`;
  }
}

/** Candidates each path contributes before fusion (at least the hits asked for). */
export const PATH_CANDIDATES = 50;

/** A candidate of either path before scoring. */
interface Merged {
  record: MemoryRecord | null;
  hit: StoreRecallHit | null;
  lexRank: number | null;
  semRank: number | null;
  sim: number | null;
}

/** A scored candidate. */
interface Scored {
  record: MemoryRecord | null;
  hit: StoreRecallHit | null;
  breakdown: ScoreBreakdown;
  match: HitMatch;
}

/** What the stable recall order compares of a scored candidate. */
function rankable(s: Scored) {
  const memoryId = s.record?.memoryId ?? s.hit!.memoryId;
  const capturedAt = s.record?.source.capturedAt ?? s.hit!.provenance.capturedAt;
  return {
    memoryId,
    total: s.breakdown.total,
    lexical: s.breakdown.lexical,
    capturedNs: parseInstant(capturedAt)!,
  };
}

/** Calibrations by embedder id prefix; others get {@link DEFAULT_CALIBRATION}. */
const CALIBRATIONS: readonly [string, SemanticCalibration][] = [
  ["use-lite@", { floor: 0.31, full: 0.53 }],
];
/** For embedders not measured here (remote models): conservative bounds. */
export const DEFAULT_CALIBRATION: SemanticCalibration = { floor: 0.45, full: 0.8 };

/** The calibration of an embedder id. */
export function calibrationOf(embedderId: string): SemanticCalibration {
  return CALIBRATIONS.find(([p]) => embedderId.startsWith(p))?.[1] ?? DEFAULT_CALIBRATION;
}

/** What a write reports about vectors, beside the records it wrote. */
export interface EmbedReport {
  /** Vectors stored by this write. */
  embedded: number;
  /** Records of this write left pending (their embedding failed). */
  pending: number;
  /** The embedding failure (its error object), when there was one. */
  embedError?: { code: string; message: string };
}

/** Progress of {@link HybridMemoryStore.reembed} and of an import's embedding. */
export interface EmbedProgress {
  done: number;
  total: number;
}

/** Options of {@link HybridMemoryStore.reembed}. */
export interface ReembedOptions {
  /** Drop every vector and embed all memories with this embedder (another one recorded). */
  migrate?: boolean;
  onProgress?: (p: EmbedProgress) => void;
}

/** A store with recall by meaning (see the module comment); `B`: the store under it. */
export class HybridMemoryStore<B extends VectorBase = SqliteMemoryStore> implements MemoryStore {
  readonly base: B;
  readonly embedder: Embedder;
  readonly calibration: SemanticCalibration;

  /** Use {@link hybridStore} (SQLite) or {@link openHybrid} (either dialect). */
  constructor(base: B, embedder: Embedder) {
    this.base = base;
    this.embedder = embedder;
    this.calibration = calibrationOf(embedder.id);
  }

  get path(): string {
    return this.base.path;
  }

  /** Memories whose vector is pending. */
  pendingCount(): ReturnType<B["vectors"]["pendingCount"]> {
    return this.base.vectors.pendingCount() as ReturnType<B["vectors"]["pendingCount"]>;
  }

  /** Why recall by meaning is off (PostgreSQL without pgvector), else none. */
  hints(): Hint[] {
    return this.base.vectors.hints();
  }

  /** Embeds `rows` in the embedder's batches; stops at the first failing batch. */
  async #embedRows(
    rows: readonly PendingVector[],
    onProgress?: (p: EmbedProgress) => void,
    base = 0,
    total = rows.length,
  ): Promise<EmbedReport> {
    const report: EmbedReport = { embedded: 0, pending: 0 };
    const size = Math.max(1, this.embedder.batchSize);
    const start = (i: number) => {
      const batch = rows.slice(i, i + size);
      const covered = batch.filter(
        (r) => r.content.trim() !== "" && (this.embedder.covers?.(r.content) ?? true),
      );
      // Through a promise: an embedder that throws synchronously fails its batch too.
      const vectors = Promise.resolve().then(() =>
        this.embedder.embed(covered.map((r) => r.content)),
      );
      vectors.catch(() => {}); // awaited below; not an unhandled rejection meanwhile
      return { batch, covered, vectors };
    };
    // The next batch embeds while this one is written (a remote embedder's request is in
    // flight through the store's synchronous writes).
    let ahead = rows.length > 0 ? start(0) : null;
    for (let i = 0; ahead !== null; i += size) {
      const { batch, covered } = ahead;
      let vectors: Float32Array[];
      try {
        vectors = await ahead.vectors;
      } catch (err) {
        report.pending += rows.length - i;
        const e = toErrorObject(err).error;
        const message =
          err instanceof PromptctxError
            ? err.message
            : `${err instanceof Error ? err.message : String(err)}`;
        report.embedError = { code: e.code, message };
        return report;
      }
      ahead = i + size < rows.length ? start(i + size) : null;
      const byRow = new Map(covered.map((r, j) => [r.rowid, vectors[j]!]));
      report.embedded += await this.base.vectors.put(
        batch.map((r) => ({
          rowid: r.rowid,
          userScope: r.userScope,
          content: r.content,
          vector: byRow.get(r.rowid) ?? null,
        })),
      );
      onProgress?.({ done: base + i + batch.length, total });
    }
    return report;
  }

  async add(
    records: readonly MemoryRecordInput[],
    options: AddOptions = {},
  ): Promise<AddResult & EmbedReport> {
    if (!Array.isArray(records)) throw new InvalidInputError("records must be an array", "records");
    const now = parseNow(options.now);
    const parsed = records.map((r, i) => parseRecord(r, ["records", i], now));
    const result = await this.base.add(parsed, options);
    const keys = parsed.map((r) => [r.userScope, r.memoryId] as const);
    if (!this.base.vectors.searchable) return { ...result, embedded: 0, pending: 0 };
    return { ...result, ...(await this.#embedRows(await this.base.vectors.pendingOf(keys))) };
  }

  async importJsonl(
    input: JsonlInput,
    options: ImportOptions & { onEmbedProgress?: (p: EmbedProgress) => void } = {},
  ): Promise<ImportResult & EmbedReport> {
    const { onEmbedProgress, ...rest } = options;
    const v = this.base.vectors;
    if (!v.searchable) return { ...result0(await this.base.importJsonl(input, rest)) };
    if (!v.scansAll) {
      // A role that sees only the scopes it declares: embed the imported scopes' pending.
      const scopes = new Set<string>();
      const result = await this.base.importJsonl(scopesOf(input, scopes), rest);
      const rows = await v.pendingIn([...scopes]);
      return { ...result, ...(await this.#embedRows(rows, onEmbedProgress)) };
    }
    const result = await this.base.importJsonl(input, rest);
    const report = await this.reembed({
      ...(onEmbedProgress ? { onProgress: onEmbedProgress } : {}),
    });
    return { ...result, ...report };
  }

  /**
   * Fills every pending vector (or, with `migrate`, re-embeds the whole store with this
   * embedder), in batches. Resumable: what was stored stays; run again after a failure.
   */
  async reembed(options: ReembedOptions = {}): Promise<EmbedReport> {
    const v = this.base.vectors;
    const off = v.hints()[0];
    if (!v.searchable && off !== undefined)
      throw new PromptctxError("invalid_input", off.message, "store");
    if (options.migrate === true && v.recorded?.embedder !== this.embedder.id) {
      await v.reset({ id: this.embedder.id, dimensions: this.embedder.dimensions });
    }
    const total = await v.pendingCount();
    const report: EmbedReport = { embedded: 0, pending: 0 };
    let after = 0;
    let done = 0;
    for (;;) {
      const rows = await v.pending(1000, after);
      if (rows.length === 0) break;
      after = rows[rows.length - 1]!.rowid;
      const r = await this.#embedRows(rows, options.onProgress, done, total);
      report.embedded += r.embedded;
      done += rows.length;
      if (r.embedError !== undefined) {
        report.pending = await v.pendingCount();
        report.embedError = r.embedError;
        return report;
      }
    }
    report.pending = await v.pendingCount();
    return report;
  }

  exportJsonl(write: (chunk: string) => void): ReturnType<B["exportJsonl"]> {
    return this.base.exportJsonl(write) as ReturnType<B["exportJsonl"]>;
  }

  count(options: { userScope?: string } = {}): ReturnType<B["count"]> {
    return this.base.count(options) as ReturnType<B["count"]>;
  }

  get(memoryId: string, options: GetOptions = {}): ReturnType<B["get"]> {
    return this.base.get(memoryId, options) as ReturnType<B["get"]>;
  }

  list(options: ListOptions): ReturnType<B["list"]> {
    return this.base.list(options) as ReturnType<B["list"]>;
  }

  listEntries(options: ListEntriesOptions): ReturnType<B["listEntries"]> {
    return this.base.listEntries(options) as ReturnType<B["listEntries"]>;
  }

  getEntry(memoryId: string, options: { userScope: string }): ReturnType<B["getEntry"]> {
    return this.base.getEntry(memoryId, options) as ReturnType<B["getEntry"]>;
  }

  history(memoryId: string, options: { userScope: string }): ReturnType<B["history"]> {
    return this.base.history(memoryId, options) as ReturnType<B["history"]>;
  }

  approve(memoryId: string, options: { userScope: string }): ReturnType<B["approve"]> {
    return this.base.approve(memoryId, options) as ReturnType<B["approve"]>;
  }

  /** Forgets through the base store: the memories' vectors and vector states go too. */
  forget(target: ForgetTarget): ReturnType<B["forget"]> {
    return this.base.forget(target) as ReturnType<B["forget"]>;
  }

  /** Hybrid recall (see the module comment); each hit carries its {@link HitMatch}. */
  async recall(query: string, options: RecallOptions): Promise<StoreRecallHit[]> {
    if (typeof query !== "string") throw new InvalidInputError("query must be a string", "query");
    const o = parseWith(RecallOptionsSchema, options, "options");
    const weights = checkWeights(o.weights ?? DEFAULT_WEIGHTS, "options.weights");
    const k = Math.max(PATH_CANDIDATES, o.limit);
    const lexical = await this.base.recall(query, { ...options, limit: k });
    const asOfMs = Number(parseInstant(o.asOf)! / 1_000_000n);
    // A recall into the past (a memory replaced after asOf) reads the scope as it was then;
    // the vectors are of the current versions, so it recalls by words only.
    const latest = await this.base.latestReplacement(o.userScope);
    const past = latest !== null && latest > asOfMs;
    const semantic = past ? [] : await this.#nearest(query, o.userScope, k, o.categories);
    const merged = await this.#merge(lexical, semantic, o.userScope);
    const scored = [...merged.values()]
      .map((m) => this.#score(m, asOfMs, weights))
      .filter((s): s is Scored => s !== null);
    scored.sort((a, b) => compareRecall(rankable(a), rankable(b)));
    return scored.slice(0, o.limit).map((s, i) => {
      const base =
        s.hit !== null
          ? { ...s.hit, score: s.breakdown.total, scoreBreakdown: s.breakdown, rank: i + 1 }
          : recallHit(s.record!, s.breakdown, i + 1);
      return { ...base, match: s.match };
    });
  }

  /** The two paths' candidates by memoryId, with their ranks and similarity. */
  async #merge(
    lexical: readonly StoreRecallHit[],
    semantic: readonly VectorHit[],
    userScope: string,
  ): Promise<Map<string, Merged>> {
    const merged = new Map<string, Merged>();
    for (const h of lexical) {
      merged.set(h.memoryId, { record: null, hit: h, lexRank: h.rank, semRank: null, sim: null });
    }
    const rows = await this.base.recordsByRowid(
      semantic.map((s) => s.rowid),
      userScope,
    );
    semantic.forEach((s, i) => {
      const record = rows.get(s.rowid);
      if (record === undefined) return;
      const sim = round6(s.similarity);
      const known = merged.get(record.memoryId);
      if (known !== undefined) {
        known.semRank = i + 1;
        known.sim = sim;
      } else merged.set(record.memoryId, { record, hit: null, lexRank: null, semRank: i + 1, sim });
    });
    return merged;
  }

  /**
   * A candidate's breakdown and match; `null` when neither path is evidence. A candidate
   * found by meaning only has lexical 0 (it is outside the full-text candidates).
   */
  #score(m: Merged, asOfMs: number, weights: ScoreWeights): Scored | null {
    const sem = m.sim === null ? 0 : semanticRelevance(m.sim, this.calibration);
    const breakdown: ScoreBreakdown =
      m.hit !== null
        ? { ...m.hit.scoreBreakdown }
        : scoreBreakdown({
            query: { terms: [], idf: [], sum: 0 },
            has: [],
            capturedMs: Number(parseInstant(m.record!.source.capturedAt)! / 1_000_000n),
            asOfMs,
            importance: m.record!.importance,
            weights,
          });
    const fused = Math.max(breakdown.lexical, sem);
    if (fused === 0) return null; // a neighbour below the floor is no evidence
    breakdown.semantic = sem;
    breakdown.total = round6(fused * breakdown.salience);
    const path =
      m.lexRank !== null && m.semRank !== null
        ? "both"
        : m.lexRank !== null
          ? "lexical"
          : "semantic";
    const match: HitMatch = {
      path,
      lexicalRank: m.lexRank,
      semanticRank: m.semRank,
      similarity: m.sim,
      semantic: sem,
      fused,
      rrf: rrf(m.lexRank, m.semRank),
    };
    return { record: m.record, hit: m.hit, breakdown, match };
  }

  /** The scope's nearest vectors to the query, or none when the embedder does not cover it. */
  async #nearest(query: string, userScope: string, k: number, categories?: readonly string[]) {
    if (!this.base.vectors.searchable) return [];
    if (query.trim() === "" || !(this.embedder.covers?.(query) ?? true)) return [];
    const [q] = await this.embedder.embed([query]);
    return this.base.vectors.search(userScope, q!, k, categories);
  }

  close(): ReturnType<B["close"]> {
    return this.base.close() as ReturnType<B["close"]>;
  }
}

/**
 * The hybrid store over an open SQLite store: records `embedder` in it when it has none,
 * refuses another one (`embedder_mismatch`) unless `migrate` (then `reembed` migrates).
 *
 * @example
 * const store = hybridStore(openStore("memory.db"), await createEmbedder({ kind: "embedded" }));
 * await store.recall("which editor colours does the user like?", { userScope: "u1", asOf });
 */
export function hybridStore(
  base: SqliteMemoryStore,
  embedder: Embedder,
  options: { migrate?: boolean } = {},
): HybridMemoryStore {
  if (options.migrate !== true) base.vectors.bind(embedder);
  return new HybridMemoryStore(base, embedder);
}

/**
 * The hybrid store over an open store of either dialect: records `embedder` in it when it
 * has none, refuses another one (`embedder_mismatch`) unless `migrate` (then `reembed`
 * migrates).
 *
 * @example
 * const store = await openHybrid(await openPostgresStore(url), await createEmbedder({ kind: "embedded" }));
 * await store.recall("which editor colours does the user like?", { userScope: "u1", asOf });
 */
export async function openHybrid<B extends VectorBase>(
  base: B,
  embedder: Embedder,
  options: { migrate?: boolean } = {},
): Promise<HybridMemoryStore<B>> {
  if (options.migrate !== true) await base.vectors.bind(embedder);
  return new HybridMemoryStore(base, embedder);
}
