/**
 * Shared by the token tests past size thresholds: gpt-tokenizer as the reference, short
 * adversarial text, vocabulary words, and a read of BpeCounter's private state.
 */
import fc from "fast-check";
import {
  decode as decodeCl100k,
  countTokens as gptCl100k,
  vocabularySize as vocabCl100k,
} from "gpt-tokenizer/encoding/cl100k_base";
import {
  decode as decodeO200k,
  countTokens as gptO200k,
  vocabularySize as vocabO200k,
} from "gpt-tokenizer/encoding/o200k_base";
import type { BpeCounter, BpeEncoding } from "../../src/tokens/bpe.js";
import { STRESS_ATOMS } from "./stress-atoms.js";

const AS_TEXT = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };
export const reference: Record<BpeEncoding, (text: string) => number> = {
  cl100k_base: (t) => gptCl100k(t, AS_TEXT),
  o200k_base: (t) => gptO200k(t, AS_TEXT),
};
export const ENCODINGS: BpeEncoding[] = ["cl100k_base", "o200k_base"];

/**
 * A private field of a counter or its merger/scanner (an array: its length), read to prove a threshold was
 * passed. A rename fails the tests that use it loudly.
 */
export function field(bpe: BpeCounter, name: "joinCount" | "joins" | "bytes"): number {
  // The counter, or one of the parts it delegates to (its merger, its scanner).
  const self = bpe as unknown as Record<string, unknown>;
  for (const owner of [self, self.merger, self.scanner]) {
    if (typeof owner !== "object" || owner === null) continue;
    const v = (owner as Record<string, unknown>)[name];
    if (typeof v === "number") return v;
    if (v instanceof Int32Array || v instanceof Uint8Array) return v.length;
  }
  throw new Error(`BpeCounter has no ${name} any more: update this test`);
}

// Adversarial short text (as in bpe.test.ts), counted between the large inputs.
export const small = fc
  .array(fc.oneof(fc.constantFrom(...STRESS_ATOMS), fc.string({ unit: "binary", maxLength: 4 })), {
    maxLength: 16,
  })
  .map((xs) => xs.join("").replaceAll("\ufeff", ""));

const DECODE: Record<BpeEncoding, [(tokens: number[]) => string, number]> = {
  cl100k_base: [decodeCl100k, vocabCl100k],
  o200k_base: [decodeO200k, vocabO200k],
};

/** Tokens of the encoding made of 2+ lower-case ASCII letters (from gpt-tokenizer). */
export function letterTokens(encoding: BpeEncoding): string[] {
  const [decode, size] = DECODE[encoding];
  const words: string[] = [];
  for (let rank = 0; rank < size; rank++) {
    let w: string;
    try {
      w = decode([rank]);
    } catch {
      continue; // an unused rank
    }
    if (/^[a-z]{2,}$/.test(w)) words.push(w);
  }
  return words;
}

/** xorshift32: the filler text of a seed, generated in a loop rather than by fast-check. */
export function xorshift(seed: number): () => number {
  let s = seed | 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}
