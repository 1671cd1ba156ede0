/** Types of recall-eval.mjs (the evaluation metrics, shared by the test and the bench). */
export interface EvalHit {
  memoryId: string;
  score: number;
}
export interface EvalQuery {
  queryId: string;
  kind: "related" | "off_topic" | "near_miss";
  lang: "en" | "zh" | "mix";
  userScope: string;
  text: string;
  relevant: string[];
}
export interface RelatedMetrics {
  queries: number;
  "recall@1": number;
  "recall@3": number;
  "recall@5": number;
  "precision@1": number;
  "precision@3": number;
  "precision@5": number;
  "answered@1": number;
  "answered@3": number;
  "answered@5": number;
  abstainRate: number;
}
export interface AbstainMetrics {
  queries: number;
  abstainRate: number;
}
export interface EvalResult {
  minScore: number;
  related: RelatedMetrics;
  relatedByLang: Record<"en" | "zh" | "mix", RelatedMetrics>;
  unrelated: AbstainMetrics;
  unrelatedByKind: Record<"off_topic" | "near_miss", AbstainMetrics>;
  failures: Array<{
    queryId: string;
    kind: string;
    text: string;
    relevant: string[];
    top: string[];
  }>;
}
export function evaluate(
  queries: readonly EvalQuery[],
  recall: (q: EvalQuery) => EvalHit[] | Promise<EvalHit[]>,
  options: { minScore: number },
): Promise<EvalResult>;
