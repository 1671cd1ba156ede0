/**
 * `promptctx memory recall`: recall in one user scope — by words (full-text) and, with an
 * embedder (the default), by meaning — printed as a table with each hit's score breakdown
 * and its two ranks (or as JSON, each hit with its `match`).
 */
import { recallHints, type StoreRecallHit } from "../../store/index.js";
import { collapseWs, formatScore, shorten } from "../../text/index.js";
import { hintLines } from "../hints.js";
import { fitText, renderTable, type TableStyle } from "../table.js";
import { stdoutStyle } from "../terminal.js";
import { listFlag, nowFlag, numberFlag, openExisting, type StoreFlags } from "./flags.js";
import { type EmbedderFlags, withMeaning } from "./meaning.js";

/** The options of `memory recall`. */
export interface RecallOpts extends StoreFlags, EmbedderFlags {
  user: string;
  query: string;
  limit: string;
  categories?: string;
  now?: string;
  json?: boolean;
  wide?: boolean;
}

// A snippet on one line; fitted tables keep the first 60 columns (--wide: all of it).
function snippetCell(text: string, style: TableStyle): string {
  const flat = collapseWs(text);
  return style.width === null ? flat : shorten(flat, 60);
}

const rankCell = (r: number | null | undefined) => (r === null || r === undefined ? "-" : r);

/** The columns of recall by meaning: which path, both ranks, the similarity. */
const MEANING_COLUMNS = [
  { header: "path", cell: (h: StoreRecallHit) => h.match?.path ?? "lexical" },
  {
    header: "lex#",
    cell: (h: StoreRecallHit) => rankCell(h.match?.lexicalRank),
    align: "right" as const,
  },
  {
    header: "sem#",
    cell: (h: StoreRecallHit) => rankCell(h.match?.semanticRank),
    align: "right" as const,
  },
  {
    header: "similarity",
    cell: (h: StoreRecallHit) =>
      h.match?.similarity === null || h.match === undefined ? "-" : formatScore(h.match.similarity),
    align: "right" as const,
  },
];

/**
 * The recall table: rank, id, total, lexical, (with recall by meaning: path, both ranks,
 * similarity,) recency, importance, snippet.
 *
 * @example recallTable(hits, stdoutStyle(false))
 */
export function recallTable(hits: readonly StoreRecallHit[], style: TableStyle): string {
  const meaning = hits.some((h) => h.match !== undefined) ? MEANING_COLUMNS : [];
  return renderTable(
    hits,
    [
      { header: "rank", cell: (h) => h.rank, align: "right" },
      { header: "id", cell: (h) => h.memoryId, whole: true },
      { header: "total", cell: (h) => formatScore(h.scoreBreakdown.total), align: "right" },
      { header: "lexical", cell: (h) => formatScore(h.scoreBreakdown.lexical), align: "right" },
      ...meaning,
      { header: "recency", cell: (h) => formatScore(h.scoreBreakdown.recency), align: "right" },
      {
        header: "importance",
        cell: (h) => formatScore(h.scoreBreakdown.importance),
        align: "right",
      },
      { header: "snippet", cell: (h) => snippetCell(h.snippet, style), elastic: true },
    ],
    style,
  );
}

/**
 * Runs `memory recall`: the hits on stdout as a table with a legend, or as JSON.
 *
 * @example await runRecall({ store: "memory.db", user: "u1", query: "python", limit: "5" });
 */
export async function runRecall(opts: RecallOpts): Promise<void> {
  const asOf = nowFlag(opts.now);
  const limit = numberFlag(opts.limit, "--limit", 1, 1000, true);
  const categories = listFlag(opts.categories);
  const store = await withMeaning(await openExisting(opts), opts, { oneText: true });
  try {
    const hits = await store.recall(opts.query, {
      userScope: opts.user,
      asOf,
      limit,
      ...(categories === undefined ? {} : { categories }),
    });
    const off = recallHints("", store);
    const hints = recallHints(opts.query, store);
    // Without vectors at all (PostgreSQL without pgvector) the hint says it instead.
    const pending = "pendingCount" in store && off.length === 0 ? await store.pendingCount() : 0;
    if (pending > 0) {
      process.stderr.write(
        `promptctx memory recall: ${pending} memory(ies) have no vector yet and are found by words only: run \`promptctx memory reembed\`\n`,
      );
    }
    if (opts.json) {
      const answer = { userScope: opts.user, query: opts.query, asOf, hits, hints };
      process.stdout.write(`${JSON.stringify(answer)}\n`);
      return;
    }
    const w = hits[0]?.scoreBreakdown.weights;
    const relevance = hits.some((h) => h.match !== undefined)
      ? "max(lexical, semantic)"
      : "lexical";
    const meaning = hits.some((h) => h.match !== undefined)
      ? "semantic = the similarity calibrated to [0, 1]; lex#/sem#: rank by words / by meaning\n"
      : "";
    const legend = w
      ? `\ntotal = ${relevance} × (${w.lexical} + ${w.recency}×recency + ${w.importance}×importance)\n${meaning}`
      : "\n(no hits)\n";
    const style = stdoutStyle(opts.wide);
    process.stdout.write(
      fitText(`${recallTable(hits, style)}\n${legend}${hintLines(hints)}`, style),
    );
  } finally {
    await store.close();
  }
}
