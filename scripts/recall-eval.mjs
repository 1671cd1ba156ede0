/**
 * Metrics of the recall evaluation set (test/fixtures/recall-eval/), shared by its test
 * (test/store/recall-eval.test.ts) and `npm run bench` (bench/sections/recall-quality.mjs).
 *
 * For each labelled query, `recall(query)` returns the ranked hits (`{memoryId, score}`,
 * best first). A hit **passes** when `score ≥ minScore` (docs/memory-selection.md's confidence gate).
 *
 * - related queries (one labelled memory each):
 *   - `recall@k`: share of the labelled memories found in the top k hits (gate or not);
 *   - `precision@k`: among the top k hits that pass, the share that are labelled, averaged
 *     over the queries with at least one passing hit;
 *   - `answered@k`: share of queries with a labelled memory in the top k **and** passing;
 *   - `abstainRate`: share with no passing hit at all (a miss for these queries).
 * - unrelated queries (`off_topic`, `near_miss`): `abstainRate`, the share with no
 *   passing hit (what the confidence gate is for).
 */

/** @typedef {{memoryId: string, score: number}} Hit */
/** @typedef {{queryId: string, kind: string, userScope: string, text: string, relevant: string[], lang: string}} Query */

const KS = [1, 3, 5];

function round4(x) {
  return Math.round(x * 10_000) / 10_000;
}

function mean(xs) {
  return xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** Metrics of related queries from their hits. */
function relatedMetrics(rows, minScore) {
  const out = { queries: rows.length };
  for (const k of KS) {
    const recall = rows.map(({ q, hits }) => {
      const top = hits.slice(0, k).map((h) => h.memoryId);
      return q.relevant.filter((id) => top.includes(id)).length / q.relevant.length;
    });
    out[`recall@${k}`] = round4(mean(recall));
  }
  for (const k of KS) {
    const ratios = [];
    for (const { q, hits } of rows) {
      const passing = hits.slice(0, k).filter((h) => h.score >= minScore);
      if (passing.length > 0) {
        ratios.push(passing.filter((h) => q.relevant.includes(h.memoryId)).length / passing.length);
      }
    }
    out[`precision@${k}`] = round4(mean(ratios));
  }
  for (const k of KS) {
    const answered = rows.filter(({ q, hits }) =>
      hits.slice(0, k).some((h) => h.score >= minScore && q.relevant.includes(h.memoryId)),
    );
    out[`answered@${k}`] = round4(answered.length / Math.max(1, rows.length));
  }
  out.abstainRate = round4(
    rows.filter(({ hits }) => !hits.some((h) => h.score >= minScore)).length /
      Math.max(1, rows.length),
  );
  return out;
}

function abstainMetrics(rows, minScore) {
  const abstained = rows.filter(({ hits }) => !hits.some((h) => h.score >= minScore));
  return { queries: rows.length, abstainRate: round4(abstained.length / Math.max(1, rows.length)) };
}

/**
 * Runs every query through `recall` and computes the metrics, overall and by language.
 * `failures` lists the related queries whose labelled memory is not in the top 3 and the
 * unrelated ones that did not abstain (for inspection).
 *
 * @param {Query[]} queries
 * @param {(q: Query) => Hit[] | Promise<Hit[]>} recall
 * @param {{minScore: number}} options
 */
export async function evaluate(queries, recall, { minScore }) {
  const rows = [];
  for (const q of queries) rows.push({ q, hits: await recall(q) });
  const split = (pred) => rows.filter(({ q }) => pred(q));
  const related = (lang) =>
    split((q) => q.kind === "related" && (lang === undefined || q.lang === lang));
  const unrelated = (kind) =>
    split((q) => q.kind !== "related" && (kind === undefined || q.kind === kind));
  const failures = rows
    .filter(({ q, hits }) =>
      q.kind === "related"
        ? !hits.slice(0, 3).some((h) => q.relevant.includes(h.memoryId))
        : hits.some((h) => h.score >= minScore),
    )
    .map(({ q, hits }) => ({
      queryId: q.queryId,
      kind: q.kind,
      text: q.text,
      relevant: q.relevant,
      top: hits.slice(0, 3).map((h) => `${h.memoryId}:${h.score}`),
    }));
  return {
    minScore,
    related: relatedMetrics(related(), minScore),
    relatedByLang: Object.fromEntries(
      ["en", "zh", "mix"].map((l) => [l, relatedMetrics(related(l), minScore)]),
    ),
    unrelated: abstainMetrics(unrelated(), minScore),
    unrelatedByKind: {
      off_topic: abstainMetrics(unrelated("off_topic"), minScore),
      near_miss: abstainMetrics(unrelated("near_miss"), minScore),
    },
    failures,
  };
}
