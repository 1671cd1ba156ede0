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

/** A store that may say why its recall is degraded (hybrid.ts). */
export interface HintingStore {
  hints?(): Hint[];
}

/**
 * The hints of a recall for `query`: `query_only_stop_words` when every word of a
 * non-blank query is a stop word (nothing can match, whatever the store holds); then the
 * store's own, e.g. `recall_full_text_only` (a PostgreSQL store without pgvector).
 *
 * @example recallHints("what is the") // [{ code: "query_only_stop_words", … }]
 */
export function recallHints(query: string, store?: object | null): Hint[] {
  const own = storeHints(store);
  if (query.trim() === "" || queryTerms(query).length > 0) return own;
  return [
    {
      code: "query_only_stop_words",
      message:
        "every word of the query is a stop word (like `the`, `is`, `what`), so no memory can match: add a content word",
    },
    ...own,
  ];
}

/** The store's own hints ({@link HintingStore}), or none. */
function storeHints(store: object | null | undefined): Hint[] {
  if (store == null || !("hints" in store)) return [];
  const hints = (store as HintingStore).hints;
  return typeof hints === "function" ? hints.call(store) : [];
}
