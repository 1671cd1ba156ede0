// The block meter: chars and tokens of the `<recalled_memory>` block as hits are added.
import { cpLength } from "../text/index.js";
import type { TokenCounter } from "../tokens/index.js";
import { lineOf, type Ranked } from "./rank.js";
import { BLOCK_CLOSE, renderBlockOpen, renderMemoryBlock } from "./render.js";

/**
 * Tokens of the block made of `open` + hit lines, computed piecewise. With a counter
 * whose `newlineCut` holds, the block `open\nH1\n…\nHn\nclose` splits exactly at every
 * newline (each next piece starts with "<"), so its count is the sum of its pieces and a
 * growing block is never recounted. Other counters count the whole rendering.
 */
export class BlockMeter {
  /** An instance kept for the life of the class: see "Object shapes" in docs/performance.md. */
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: held only to keep the shape alive
  static readonly #shape = new BlockMeter("", {} as TokenCounter, false);
  private hitTokens = 0; // Σ T(line + "\n") over selected lines (newlineCut only)
  private hitChars = 0; // Σ (cpLength(line) + 1)
  private readonly hits: Ranked[] = [];
  private closeTokens = -1;
  private readonly closeChars = cpLength(BLOCK_CLOSE);
  // The open tag of the block with one more hit than selected (it names the count), in
  // chars and tokens: it changes only when a hit is added, not per candidate priced.
  private openChars = -1;
  private openTokens = -1;

  /** With `pricesTokens` false (no token budget), nothing is ever counted. */
  constructor(
    private readonly scope: string,
    private readonly counter: TokenCounter,
    private readonly pricesTokens: boolean,
  ) {}

  /** Hits added so far. */
  get count(): number {
    return this.hits.length;
  }

  /** The added hits' lines, in the order added. */
  lines(): string[] {
    return this.hits.map(lineOf);
  }

  private nextOpen(): string {
    return renderBlockOpen(this.scope, this.hits.length + 1);
  }

  /** Chars of the block if `r` were added. */
  charsWith(r: Ranked): number {
    if (this.openChars < 0) this.openChars = cpLength(this.nextOpen());
    return this.openChars + 1 + this.hitChars + r.chars + 1 + this.closeChars;
  }

  /** Tokens of the block if `r` were added. */
  tokensWith(r: Ranked): number {
    // A hit priced by tokens is counted itself too (its decision reports it).
    if (r.tokens < 0) r.tokens = this.counter.count(lineOf(r));
    if (!this.counter.newlineCut) {
      return this.counter.count(renderMemoryBlock(this.scope, [...this.lines(), lineOf(r)]));
    }
    if (this.closeTokens < 0) this.closeTokens = this.counter.count(BLOCK_CLOSE);
    if (this.openTokens < 0) this.openTokens = this.counter.count(`${this.nextOpen()}\n`);
    return this.openTokens + this.hitTokens + this.joinedTokens(r) + this.closeTokens;
  }

  // T(line + "\n"): measured with the line's count when the counter could extend it,
  // else counted (and kept for when the hit is added).
  private joinedTokens(r: Ranked): number {
    if (r.joined < 0) r.joined = this.counter.count(`${lineOf(r)}\n`);
    return r.joined;
  }

  add(r: Ranked): void {
    this.hits.push(r);
    this.hitChars += r.chars + 1;
    if (this.pricesTokens && this.counter.newlineCut) this.hitTokens += this.joinedTokens(r);
    this.openChars = -1;
    this.openTokens = -1;
  }
}
