/**
 * Hints: why an answer is empty or surprising, each with a stable code, shown next to the
 * answer (a `hints` field in JSON, a `hint:` line for people).
 */
import { queryTerms } from "./terms.js";

/** One hint: a stable machine-readable code and a message for people. */
export interface Hint {
  code: string;
  message: string;
}

/**
 * The hints of a recall for `query`: `query_only_stop_words` when every word of a
 * non-blank query is a stop word (nothing can match, whatever the store holds).
 *
 * @example recallHints("what is the") // [{ code: "query_only_stop_words", … }]
 */
export function recallHints(query: string): Hint[] {
  if (query.trim() === "" || queryTerms(query).length > 0) return [];
  return [
    {
      code: "query_only_stop_words",
      message:
        "every word of the query is a stop word (like `the`, `is`, `what`), so no memory can match: add a content word",
    },
  ];
}
