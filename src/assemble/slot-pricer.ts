/**
 * Prices a growing slot against its own budgets. With the renderer's pieces (a
 * {@link SlotFrame}), the chars of the slot plus one more item come from that item's line
 * alone — the head, the separators and the tail are measured once — so an item the budget
 * rejects costs one line, not a rendering of the whole slot. Tokens are counted on the
 * whole rendering, and only when the slot has a token budget and the chars fit.
 */
import type { SlotFrame } from "../render/index.js";
import type { SlotFilter } from "../sources/index.js";
import { cpLength } from "../text/index.js";
import type { TokenCounter } from "../tokens/index.js";
import type { BudgetOverrun, SlotRendering, SourcedItem } from "./items.js";

/** The items selected so far and what one more would cost. */
export class SlotPricer {
  /** An instance kept for the life of the class: see "Object shapes" in docs/performance.md. */
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: held only to keep the shape alive
  static readonly #shape = new SlotPricer({ render: () => "" }, {}, {} as TokenCounter);
  readonly selected: SourcedItem[] = [];
  private readonly frame: SlotFrame | undefined;
  private readonly separatorChars: number;
  private readonly tailChars: number;
  /** Σ code points of the selected items' lines (with a frame). */
  private bodyChars = 0;
  /** Code points of the head for one item more than selected; -1 until measured. */
  private nextHeadChars = -1;
  /** The last item priced by its line, and that line's code points. */
  private priced: SourcedItem | null = null;
  private pricedChars = 0;

  constructor(
    private readonly rendering: SlotRendering,
    private readonly filter: SlotFilter,
    private readonly counter: TokenCounter,
  ) {
    this.frame = rendering.frame;
    this.separatorChars = this.frame === undefined ? 0 : cpLength(this.frame.separator);
    this.tailChars = this.frame === undefined ? 0 : cpLength(this.frame.tail);
  }

  /** The first budget the slot rendering exactly `items` breaks (chars before tokens). */
  overWith(items: readonly SourcedItem[]): BudgetOverrun | null {
    const text = this.rendering.render(items);
    return this.overrun(cpLength(text), text, null);
  }

  /** The first budget the selected items plus `s` break, or null when `s` fits. */
  priceOne(s: SourcedItem): BudgetOverrun | null {
    const { charBudget, tokenBudget } = this.filter;
    if (charBudget === undefined && tokenBudget === undefined) return null;
    // Without a frame the slot is rendered once, for chars and tokens alike.
    const text = this.frame === undefined ? this.rendering.render([...this.selected, s]) : null;
    const chars =
      charBudget === undefined ? 0 : text === null ? this.framedChars(s) : cpLength(text);
    return this.overrun(chars, text, s);
  }

  add(s: SourcedItem): void {
    if (this.frame !== undefined) {
      this.bodyChars += this.lineChars(s);
      this.nextHeadChars = -1;
    }
    this.selected.push(s);
  }

  /** The slot as packed: its rendering, code points and tokens. */
  finish(): { selected: SourcedItem[]; rendered: string; chars: number; tokens: number } {
    const rendered = this.rendering.render(this.selected);
    return {
      selected: this.selected,
      rendered,
      chars: cpLength(rendered),
      tokens: this.counter.count(rendered),
    };
  }

  /**
   * The first budget broken by a rendering of `chars` code points: `text`, or (null) the
   * selected items plus `s`, rendered only when tokens must be counted and the chars fit.
   */
  private overrun(chars: number, text: string | null, s: SourcedItem | null): BudgetOverrun | null {
    const { charBudget, tokenBudget } = this.filter;
    if (charBudget !== undefined && chars > charBudget) {
      return { unit: "chars", field: "charBudget", used: chars, budget: charBudget };
    }
    if (tokenBudget !== undefined) {
      const whole = text ?? this.rendering.render([...this.selected, s as SourcedItem]);
      const used = this.counter.count(whole);
      if (used > tokenBudget)
        return { unit: "tokens", field: "tokenBudget", used, budget: tokenBudget };
    }
    return null;
  }

  // head(n + 1) + lines + n separators + tail: code points add up piece by piece (every
  // built-in frame joins its pieces with newlines, so no surrogate pair spans two).
  private framedChars(s: SourcedItem): number {
    const frame = this.frame as SlotFrame;
    const n = this.selected.length;
    if (this.nextHeadChars < 0) this.nextHeadChars = cpLength(frame.head(n + 1));
    return (
      this.nextHeadChars +
      this.bodyChars +
      this.lineChars(s) +
      n * this.separatorChars +
      this.tailChars
    );
  }

  private lineChars(s: SourcedItem): number {
    if (this.priced !== s) {
      const frame = this.frame as SlotFrame;
      const index = this.selected.length;
      this.pricedChars = frame.lineChars
        ? frame.lineChars(s.item, index)
        : cpLength(frame.line(s.item, index));
      this.priced = s;
    }
    return this.pricedChars;
  }
}
