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
  private hitTokens = 0; // Σ T(line + "\n") over selected lines (newlineCut only)
  private hitChars = 0; // Σ (cpLength(line) + 1)
  private readonly lines: string[] = [];
  private readonly closeTokens: number;
  private readonly closeChars = cpLength(BLOCK_CLOSE);
  // The open tag of the block with one more hit than selected (it names the count), in
  // chars and tokens: it changes only when a hit is added, not per candidate priced.
  private openChars = -1;
  private openTokens = -1;

  constructor(
    private readonly scope: string,
    private readonly counter: TokenCounter,
  ) {
    this.closeTokens = counter.newlineCut ? counter.count(BLOCK_CLOSE) : 0;
  }

  get selected(): readonly string[] {
    return this.lines;
  }

  private nextOpen(): string {
    return renderBlockOpen(this.scope, this.lines.length + 1);
  }

  /** Chars of the block if `r` were added. */
  charsWith(r: Ranked): number {
    if (this.openChars < 0) this.openChars = cpLength(this.nextOpen());
    return this.openChars + 1 + this.hitChars + r.chars + 1 + this.closeChars;
  }

  /** Tokens of the block if `r` were added. */
  tokensWith(r: Ranked): number {
    if (!this.counter.newlineCut) {
      return this.counter.count(renderMemoryBlock(this.scope, [...this.lines, lineOf(r)]));
    }
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
    this.lines.push(lineOf(r));
    this.hitChars += r.chars + 1;
    if (this.counter.newlineCut) this.hitTokens += this.joinedTokens(r);
    this.openChars = -1;
    this.openTokens = -1;
  }
}
