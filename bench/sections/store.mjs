/**
 * Section `store`: the embedded SQLite memory store (spec 06). JSONL import throughput
 * and recall latency over 100,000 and then 1,000,000 synthetic memories.
 *
 * Records are generated deterministically (seeded PRNG) into JSONL files in a temp dir,
 * untimed and streamed (never all in memory); import reads them back with a file stream
 * (`importJsonl(createReadStream(…))`, default batch size), so records/s covers reading,
 * JSON parsing, validation, the row and its full-text terms. The store is filled with
 * the first 100,000, queried, grown to 1,000,000 in the same file, and queried again.
 *
 * Recall: ~200 fixed queries (English words of the generator's vocabulary, CJK, code
 * identifiers, mixed, and queries with no hits: unknown words or an empty scope), each
 * with its user scope, limit 20, one `asOf`. An untimed warm-up over the first 50, then
 * up to 3 timed passes (time-boxed, at least one); a query's latency is the median of
 * its passes, and the figures are the median and p95 over queries. The temp dir is
 * deleted at the end.
 */
import {
  closeSync,
  createReadStream,
  mkdtempSync,
  openSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { median, round3 } from "../lib/measure.mjs";
import { importDist } from "../lib/modules.mjs";
import { cjkSentence, codeSnippet, createRng, fragment, sentence } from "../lib/prng.mjs";
import { heading, int, ms, table } from "../lib/report.mjs";

export const meta = {
  name: "store",
  order: 40,
  title: "Memory store (SQLite): JSONL import throughput and recall latency",
};

const SIZES = [100_000, 1_000_000];
/** Scopes and their share of the records. */
const SCOPES = {
  "user-0001": 30,
  "user-0002": 20,
  "team-ops": 15,
  "user-0003": 7,
  "user-0004": 7,
  "user-0005": 7,
  "user-0006": 7,
  "user-0007": 7,
};
const EMPTY_SCOPE = "user-9999";
const QUERIES = 200;
const LIMIT = 20;
const BASE_MS = Date.UTC(2024, 0, 1);
const TWO_YEARS_S = 2 * 365 * 24 * 3600;
const AS_OF = "2026-01-01T00:00:00Z";
const GEN_CHUNK = 1_000;
const MAX_PASSES = 3;
/** Time box of the timed recall passes at each size (at least one pass runs). */
const RECALL_BUDGET_MS = 45_000;
/** Queries of the untimed warm-up pass (JIT, statement and page caches). */
const WARMUP_QUERIES = 50;

const KINDS = { fact: 50, episodic: 25, conversation: 20, profile: 5 };
const CATEGORIES = { general: 40, fact: 20, episodic: 15, tool_failure: 10, preference: 15 };
const TAGS = ["db", "ci", "deploy", "api", "ui", "billing", "oncall", "style", "部署", "测试"];
const SOURCE_TYPES = ["chat", "note", "doc", "email", "ticket", "commit"];

/** UTF-16 code units that start a code point. */
function cpCount(s) {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xdc00 || c > 0xdfff) n++;
  }
  return n;
}

/**
 * prng.mjs's `textOfLength`, same PRNG calls and same output, with the length kept
 * incrementally (that one recounts the whole string per fragment: 3× slower over 1M).
 */
function textOfLength(r, kind, length) {
  let s = "";
  let n = 0;
  while (n < length) {
    const piece = (s === "" ? "" : kind === "code" ? "\n" : " ") + fragment(r, kind);
    s += piece;
    n += cpCount(piece);
  }
  const cut = (n === s.length ? s.slice(0, length) : [...s].slice(0, length).join("")).trimEnd();
  return cut === "" ? "x" : cut;
}

function pad(n, width) {
  return String(n).padStart(width, "0");
}

/** One synthetic record (JSON line without newline); `i` is its 0-based number. */
function recordLine(r, i) {
  const kind = r.weighted({ prose: 50, cjk: 20, code: 20, mixed: 10 });
  const rec = {
    memoryId: `m-${pad(i + 1, 7)}`,
    userScope: r.weighted(SCOPES),
    kind: r.weighted(KINDS),
    category: r.weighted(CATEGORIES),
    tags: Array.from({ length: r.int(0, 3) }, () => r.pick(TAGS)).filter(
      (t, j, a) => a.indexOf(t) === j,
    ),
    content: textOfLength(r, kind, r.int(50, 400)),
    importance: Math.round(r.float() * 100) / 100,
    source: {
      sourceId: `src-${r.int(1, 5000)}`,
      sourceType: r.pick(SOURCE_TYPES),
      title: sentence(r, 2, 6),
      capturedAt: new Date(BASE_MS + r.int(0, TWO_YEARS_S) * 1000)
        .toISOString()
        .replace(".000Z", "Z"),
    },
  };
  if (r.chance(0.2)) rec.summary = sentence(r, 4, 10);
  if (r.chance(0.08)) {
    rec.conflictKey = `preference:topic-${r.int(1, 500)}`;
    rec.authority = r.pick(["current_turn", "workspace_override", "user_default"]);
  }
  return JSON.stringify(rec);
}

/**
 * Writes records [from, to) to `file` as JSONL, GEN_CHUNK lines per write; the PRNG is
 * seeded per chunk so any range is reproducible on its own.
 */
export function writeRecords(file, from, to, seed = 0x5704e) {
  const fd = openSync(file, "w");
  let bytes = 0;
  try {
    for (let start = from; start < to; start += GEN_CHUNK) {
      const r = createRng(seed ^ Math.imul(start / GEN_CHUNK + 1, 0x9e3779b1));
      const lines = [];
      for (let i = start; i < Math.min(to, start + GEN_CHUNK); i++) lines.push(recordLine(r, i));
      const chunk = `${lines.join("\n")}\n`;
      bytes += writeSync(fd, chunk);
    }
  } finally {
    closeSync(fd);
  }
  return bytes;
}

/** Word runs of a code snippet that are at least 3 chars long (identifiers, keywords). */
function codeWords(r) {
  const words = codeSnippet(r).match(/[A-Za-z_][A-Za-z0-9_]{2,}/g) ?? ["fetch"];
  return words;
}

/** The recall queries: {kind, text, userScope}; deterministic. */
export function makeQueries(n = QUERIES, seed = 0x9e5) {
  const r = createRng(seed);
  const unknown = ["zorbex", "quillon", "vexterm", "plonkish", "gribbleflux", "snarfwidget"];
  const rareCjk = "龘靐齉爨麤鱻驫";
  const out = [];
  for (let i = 0; i < n; i++) {
    const kind = r.weighted({ english: 35, cjk: 20, code: 15, mixed: 15, miss: 10, empty: 5 });
    let text;
    switch (kind) {
      case "english":
        text = sentence(r, 1, 4).replace(/[.!?;]$/, "");
        break;
      case "cjk":
        text = cjkSentence(r, 2, 6).replace(/。$/, "");
        break;
      case "code": {
        const words = codeWords(r);
        text = words.slice(0, r.int(1, 2)).join(" ");
        break;
      }
      case "mixed":
        text = `${sentence(r, 1, 3).replace(/[.!?;]$/, "")} ${cjkSentence(r, 2, 4).replace(/。$/, "")}`;
        break;
      case "miss":
        text = r.chance(0.7)
          ? `${r.pick(unknown)} ${r.pick(unknown)}${r.int(1, 99)}`
          : rareCjk.slice(r.int(0, 3), r.int(4, 7));
        break;
      default:
        // A real query against a scope that holds nothing.
        text = sentence(r, 1, 3).replace(/[.!?;]$/, "");
    }
    out.push({ kind, text, userScope: kind === "empty" ? EMPTY_SCOPE : r.weighted(SCOPES) });
  }
  return out;
}

/** Bytes of the store file plus its WAL and shared-memory files. */
function dbBytes(file) {
  let n = 0;
  for (const f of [file, `${file}-wal`, `${file}-shm`]) {
    try {
      n += statSync(f).size;
    } catch {
      // not there
    }
  }
  return n;
}

function mib(bytes) {
  return `${(bytes / 1_048_576).toFixed(1)} MiB`;
}

function rate(x) {
  return `${int(Math.round(x))}/s`;
}

function percentile(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}

async function timedImport(store, file, expected, label) {
  const gc = globalThis.gc;
  if (typeof gc === "function") gc();
  let nextReport = 250_000;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const res = await store.importJsonl(createReadStream(file, { highWaterMark: 1 << 20 }), {
    now: AS_OF,
    onProgress: (p) => {
      if (p.imported >= nextReport) {
        const s = (performance.now() - t0) / 1000;
        console.log(
          `    importing ${label}: ${int(p.imported)} of ${int(expected)} after ${s.toFixed(1)} s`,
        );
        nextReport += 250_000;
      }
    },
  });
  const secs = (performance.now() - t0) / 1000;
  const cu = process.cpuUsage(c0);
  if (res.imported !== expected || res.skipped !== 0) {
    throw new Error(
      `import of ${label} gave ${res.imported} imported, ${res.skipped} skipped (expected ${expected}): ${JSON.stringify(res.errors.slice(0, 3))}`,
    );
  }
  return {
    records: res.imported,
    seconds: round3(secs),
    cpuSeconds: round3((cu.user + cu.system) / 1e6),
    recordsPerSecond: Math.round(res.imported / secs),
    recordsPerCpuSecond: Math.round(res.imported / ((cu.user + cu.system) / 1e6)),
  };
}

async function recallPasses(store, queries) {
  const gc = globalThis.gc;
  const run = (qs) => {
    const ms = [];
    const hits = [];
    for (const q of qs) {
      const t0 = performance.now();
      const h = store.recall(q.text, { userScope: q.userScope, limit: LIMIT, asOf: AS_OF });
      ms.push(performance.now() - t0);
      hits.push(h.length);
    }
    return { ms, hits };
  };
  if (typeof gc === "function") gc();
  const w0 = performance.now();
  run(queries.slice(0, WARMUP_QUERIES));
  const warmMs = performance.now() - w0;
  const passes = [];
  let hits = null;
  const start = performance.now();
  while (passes.length < MAX_PASSES) {
    if (passes.length >= 1) {
      const elapsed = performance.now() - start;
      if (elapsed + elapsed / passes.length > RECALL_BUDGET_MS) break;
    }
    if (typeof gc === "function") gc();
    const pass = run(queries);
    passes.push(pass.ms);
    hits ??= pass.hits;
  }
  const perQuery = queries.map((_, i) => median(passes.map((p) => p[i])));
  const byKind = {};
  queries.forEach((q, i) => {
    byKind[q.kind] ??= { queries: 0, ms: [], hits: [] };
    byKind[q.kind].queries++;
    byKind[q.kind].ms.push(perQuery[i]);
    byKind[q.kind].hits.push(hits[i]);
  });
  return {
    passes: passes.length,
    warmupQueries: WARMUP_QUERIES,
    warmupMs: round3(warmMs),
    medianMs: round3(median(perQuery)),
    p95Ms: round3(percentile(perQuery, 95)),
    maxMs: round3(Math.max(...perQuery)),
    meanHits: Math.round((hits.reduce((a, b) => a + b, 0) / queries.length) * 10) / 10,
    queriesWithoutHits: hits.filter((h) => h === 0).length,
    byKind: Object.fromEntries(
      Object.entries(byKind).map(([k, v]) => [
        k,
        {
          queries: v.queries,
          medianMs: round3(median(v.ms)),
          p95Ms: round3(percentile(v.ms, 95)),
          meanHits: Math.round((v.hits.reduce((a, b) => a + b, 0) / v.queries) * 10) / 10,
        },
      ]),
    ),
  };
}

export async function run(_ctx) {
  heading(meta.title);
  const storeMod = await importDist("store/index.js");
  const dir = mkdtempSync(path.join(os.tmpdir(), "promptctx-bench-store-"));
  const dbFile = path.join(dir, "memory.db");
  const queries = makeQueries();
  const results = {
    scopes: SCOPES,
    queries: {
      count: queries.length,
      limit: LIMIT,
      asOf: AS_OF,
      kinds: queries.reduce((a, q) => {
        a[q.kind] = (a[q.kind] ?? 0) + 1;
        return a;
      }, {}),
    },
    sizes: {},
  };
  console.log(
    `  ${Object.keys(SCOPES).length} user scopes (largest ${Object.values(SCOPES)[0]} %), ` +
      "content 50–400 chars (English, CJK, code, mixed), capturedAt over 2 years",
  );
  console.log(
    `  ${queries.length} recall queries (limit ${LIMIT}): ` +
      Object.entries(results.queries.kinds)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ") +
      `; latency = median of up to ${MAX_PASSES} timed passes per query (time-boxed) after ` +
      `an untimed warm-up over ${WARMUP_QUERIES} of them`,
  );
  console.log(`  temp dir ${dir}`);
  let store = null;
  try {
    // Generate both JSONL files first (untimed).
    const files = [];
    let from = 0;
    const g0 = performance.now();
    for (const n of SIZES) {
      const file = path.join(dir, `records-${from}-${n}.jsonl`);
      const bytes = writeRecords(file, from, n);
      files.push({ file, from, to: n, bytes });
      from = n;
    }
    const genSeconds = (performance.now() - g0) / 1000;
    const totalBytes = files.reduce((a, f) => a + f.bytes, 0);
    console.log(
      `  generated ${int(SIZES[SIZES.length - 1])} records (${mib(totalBytes)} of JSONL) ` +
        `in ${genSeconds.toFixed(1)} s, untimed`,
    );
    results.generation = { seconds: round3(genSeconds), jsonlBytes: totalBytes };

    store = storeMod.openStore(dbFile);
    results.poolSize = store.poolSize;
    results.matchBudget = store.matchBudget;
    const rows = [
      [
        "records",
        "import",
        "records/s",
        "cpu s",
        "rec/cpu-s",
        "db size",
        "recall median",
        "recall p95",
        "max",
        "passes",
      ],
    ];
    for (const f of files) {
      const imp = await timedImport(store, f.file, f.to - f.from, `${int(f.from)}–${int(f.to)}`);
      const count = store.count();
      if (count !== f.to) throw new Error(`store holds ${count} records, expected ${f.to}`);
      const sizeAfterImport = dbBytes(dbFile);
      const rec = await recallPasses(store, queries);
      results.sizes[f.to] = {
        import: { ...imp, jsonlBytes: f.bytes },
        dbBytes: sizeAfterImport,
        recall: rec,
      };
      rows.push([
        int(f.to),
        `${int(imp.records)} in ${imp.seconds.toFixed(1)} s`,
        rate(imp.recordsPerSecond),
        imp.cpuSeconds.toFixed(1),
        int(imp.recordsPerCpuSecond),
        mib(sizeAfterImport),
        ms(rec.medianMs),
        ms(rec.p95Ms),
        ms(rec.maxMs),
        String(rec.passes),
      ]);
    }
    store.close();
    store = null;
    results.dbBytesAfterClose = dbBytes(dbFile);
    table(rows);
    console.log(
      "  import = the records added at that step (batches of 1,000, read from a JSONL file); " +
        "cpu s = process CPU time of the import",
    );
    console.log(
      `  db size = file + WAL right after each import; ${mib(results.dbBytesAfterClose)} ` +
        "after close (WAL checkpointed)",
    );
    console.log("");
    const kinds = Object.keys(results.queries.kinds);
    const kindRows = [
      [
        "query kind",
        "n",
        ...SIZES.flatMap((n) => [`median ${short(n)}`, `p95 ${short(n)}`, `hits ${short(n)}`]),
      ],
    ];
    for (const k of kinds) {
      const row = [k, String(results.queries.kinds[k])];
      for (const n of SIZES) {
        const b = results.sizes[n].recall.byKind[k];
        row.push(ms(b.medianMs), ms(b.p95Ms), b.meanHits.toFixed(1));
      }
      kindRows.push(row);
    }
    table(kindRows);
    console.log(
      `  hits = mean hits per query (limit ${LIMIT}); queries without hits: ` +
        SIZES.map((n) => `${results.sizes[n].recall.queriesWithoutHits} at ${short(n)}`).join(", "),
    );
    console.log(
      `  recall scores at most ${int(results.matchBudget)} in-scope matches by bm25 and ` +
        `fully scores the best ${int(results.poolSize)} (store defaults)`,
    );
    const total = SIZES.reduce((a, n) => a + results.sizes[n].import.seconds, 0);
    console.log(
      `  import time in all: ${total.toFixed(1)} s for ${int(SIZES[SIZES.length - 1])} records`,
    );
  } finally {
    if (store !== null) store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return results;
}

function short(n) {
  return n >= 1_000_000 ? `${n / 1_000_000}M` : `${n / 1_000}k`;
}
