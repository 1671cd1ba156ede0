// The per-candidate steps of selection, in rank order: gates, dedupe, conflict slots and packing.
import { formatScore, normalizeKey } from "../text/index.js";
import type { TokenCounter } from "../tokens/index.js";
import { BlockMeter } from "./block-meter.js";
import { decision, type MemoryDecision } from "./decision.js";
import type { Ranked } from "./rank.js";
import type { Candidate, Policy } from "./schema.js";
import { screenText } from "./takeover.js";

/**
 * One selection's state: the texts and slots seen so far, the block being packed and one
 * decision per candidate considered. Each step returns the candidate's rejection, or null
 * to pass it on to the next step.
 */
export class Selection {
  /** An instance kept for the life of the class: see "Object shapes" in docs/performance.md. */
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: held only to keep the shape alive
  static readonly #shape = new Selection(
    "",
    { minScore: 0, topK: 1, maxChars: null, maxTokens: null },
    {} as TokenCounter,
  );
  readonly decisions: MemoryDecision[] = [];
  readonly meter: BlockMeter;
  /** Tokens of the block at the last selection: exact when measured, -1 without a token budget. */
  usedTokens = 0;
  private readonly slotless = new Map<string, string>(); // text key → first id, among slot-less hits
  private readonly slotTexts = new Map<string, Map<string, string>>(); // slot → (text key → first id)
  private readonly slots = new Map<string, Ranked>(); // slot key → winner
  private readonly minScoreText: string;
  private readonly topKDetail: string;
  // Details shared by value: thousands of candidates priced near a full budget repeat a
  // few hundred totals, and most out-of-scope ones a few scopes. Keys: a scope (string),
  // a token total (n >= 0) or a char total (-1 - n).
  private readonly details = new Map<string | number, string>();

  constructor(
    private readonly scope: string,
    private readonly policy: Policy,
    counter: TokenCounter,
  ) {
    this.meter = new BlockMeter(scope, counter, policy.maxTokens !== null);
    this.minScoreText = formatScore(policy.minScore);
    this.topKDetail = `topK ${policy.topK} already selected`;
  }

  /** Decides `r`, the next candidate in rank order: the first step that rejects it, else selected. */
  consider(r: Ranked): void {
    let d = this.gate(r);
    if (d === null) {
      const slot = r.slotKey === null ? null : normalizeKey(r.slotKey);
      d = this.dedupe(r, slot) ?? this.contestSlot(r, slot) ?? this.pack(r);
    }
    this.decisions.push(d);
  }

  private sharedDetail(key: string | number, make: () => string): string {
    let d = this.details.get(key);
    if (d === undefined) {
      d = make();
      this.details.set(key, d);
    }
    return d;
  }

  /** The scope gate, the takeover gate (when the policy asks for it), then the confidence gate. */
  private gate(r: Ranked): MemoryDecision | null {
    if (r.scope !== this.scope) {
      const detail = this.sharedDetail(
        r.scope,
        () => `scope ${JSON.stringify(r.scope)} is not the query scope`,
      );
      return decision(r, "rejected", "scope_mismatch", null, detail);
    }
    if (this.policy.takeoverGate === "quarantine") {
      const hit = screenText(r.text);
      if (hit !== null) {
        const detail = `held by the takeover gate (rule ${hit.rule}): never recalled into a prompt`;
        return decision(r, "rejected", "quarantined", null, detail);
      }
    }
    if (r.score < this.policy.minScore) {
      const detail = `score ${formatScore(r.score)} is below minScore ${this.minScoreText}`;
      return decision(r, "rejected", "low_confidence", null, detail);
    }
    return null;
  }

  /** Exact dedupe: the first hit with the same normalized text in the same slot (or none) wins. */
  private dedupe(r: Ranked, slot: string | null): MemoryDecision | null {
    // Texts are compared within their slot (or among slot-less hits): a map of texts per
    // slot, keyed by the normalized text itself (no joined key to build and hash).
    const text = textKey(r);
    let texts = slot === null ? this.slotless : this.slotTexts.get(slot);
    if (texts === undefined) {
      texts = new Map();
      this.slotTexts.set(slot as string, texts);
    }
    const original = texts.get(text);
    if (original !== undefined) {
      return decision(r, "rejected", "duplicate_content", original, `same content as ${original}`);
    }
    texts.set(text, r.id);
    return null;
  }

  /** Conflict slots: the first hit of a slot holds it; later ones lose by authority or rank. */
  private contestSlot(r: Ranked, slot: string | null): MemoryDecision | null {
    if (slot === null) return null;
    const winner = this.slots.get(slot);
    if (winner === undefined) {
      this.slots.set(slot, r);
      return null;
    }
    const weaker = r.rank < winner.rank;
    const detail = weaker
      ? `slot ${JSON.stringify(slot)} is held by ${winner.id} with higher authority ${winner.authority}`
      : `slot ${JSON.stringify(slot)} is held by higher-ranked ${winner.id}`;
    return decision(
      r,
      "rejected",
      weaker ? "authority_loser" : "conflict_loser",
      winner.id,
      detail,
    );
  }

  /** Top-k, then the char budget, then the token budget; selects `r` when all leave room. */
  private pack(r: Ranked): MemoryDecision {
    const { meter, policy } = this;
    if (meter.count >= policy.topK) {
      return decision(r, "rejected", "top_k_reached", null, this.topKDetail);
    }
    if (policy.maxChars !== null) {
      const chars = meter.charsWith(r);
      if (chars > policy.maxChars) {
        const detail = this.sharedDetail(
          -1 - chars,
          () => `would use ${chars} chars; budget is ${policy.maxChars}`,
        );
        return decision(r, "rejected", "char_budget_exceeded", null, detail);
      }
    }
    let tokens = -1;
    if (policy.maxTokens !== null) {
      tokens = meter.tokensWith(r);
      if (tokens > policy.maxTokens) {
        const detail = this.sharedDetail(
          tokens,
          () => `would use ${tokens} tokens; budget is ${policy.maxTokens}`,
        );
        return decision(r, "rejected", "token_budget_exceeded", null, detail);
      }
    }
    meter.add(r);
    this.usedTokens = tokens;
    return decision(r, "selected", "selected", null, `selected as hit ${meter.count}`);
  }
}

/**
 * Normalized texts of frozen candidates, computed once: a caller that hands the same
 * frozen candidates to every selection (the assembler's recall slot, over an unchanged
 * recall source) does not normalize them again. A frozen candidate's text cannot change,
 * and the weak map holds no candidate alive.
 */
const frozenTextKeys = new WeakMap<Candidate, string>();

// The dedupe key of `r`'s text.
function textKey(r: Ranked): string {
  if (!Object.isFrozen(r.c)) return normalizeKey(r.text);
  let key = frozenTextKeys.get(r.c);
  if (key === undefined) {
    key = normalizeKey(r.text);
    frozenTextKeys.set(r.c, key);
  }
  return key;
}
