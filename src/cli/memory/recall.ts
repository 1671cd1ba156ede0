/**
 * `promptctx memory recall`: full-text recall in one user scope, printed as a table with
 * each hit's score breakdown (or as JSON).
 */
import { recallHints, type StoreRecallHit } from "../../store/index.js";
import { collapseWs, formatScore, shorten } from "../../text/index.js";
import { hintLines } from "../hints.js";
import { fitText, renderTable, type TableStyle } from "../table.js";
import { stdoutStyle } from "../terminal.js";
import { listFlag, nowFlag, numberFlag, openExisting, type StoreFlags } from "./flags.js";

/** The options of `memory recall`. */
export interface RecallOpts extends StoreFlags {
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

/**
 * The recall table: rank, id, total, lexical, recency, importance, snippet.
 *
 * @example recallTable(hits, stdoutStyle(false))
 */
export function recallTable(hits: readonly StoreRecallHit[], style: TableStyle): string {
  return renderTable(
    hits,
    [
      { header: "rank", cell: (h) => h.rank, align: "right" },
      { header: "id", cell: (h) => h.memoryId, whole: true },
      { header: "total", cell: (h) => formatScore(h.scoreBreakdown.total), align: "right" },
      { header: "lexical", cell: (h) => formatScore(h.scoreBreakdown.lexical), align: "right" },
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
  const store = await openExisting(opts);
  try {
    const hits = await store.recall(opts.query, {
      userScope: opts.user,
      asOf,
      limit,
      ...(categories === undefined ? {} : { categories }),
    });
    const hints = recallHints(opts.query);
    if (opts.json) {
      const answer = { userScope: opts.user, query: opts.query, asOf, hits, hints };
      process.stdout.write(`${JSON.stringify(answer)}\n`);
      return;
    }
    const w = hits[0]?.scoreBreakdown.weights;
    const legend = w
      ? `\ntotal = lexical × (${w.lexical} + ${w.recency}×recency + ${w.importance}×importance)\n`
      : "\n(no hits)\n";
    const style = stdoutStyle(opts.wide);
    process.stdout.write(
      fitText(`${recallTable(hits, style)}\n${legend}${hintLines(hints)}`, style),
    );
  } finally {
    await store.close();
  }
}
