/** Types of gen-recall-eval.mjs (the generator of test/fixtures/recall-eval/). */
export const SEED: number;
export const AS_OF: string;
export function generate(seed?: number): { memories: unknown[]; queries: unknown[] };
export function fixtureFiles(seed?: number): Record<"memories.jsonl" | "queries.jsonl", string>;
