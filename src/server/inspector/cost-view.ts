/**
 * The Cost view: the estimated input cost of each turn with provider cache pricing (cache
 * reads and writes as multiples of an input price the user sets), and the session's
 * cache-read share.
 */
import { h, num, replace, row, table } from "./dom.js";
import { dollars, percent, type State, sessionTotals, type TurnCost, turnCosts } from "./model.js";

/** What the view reports back: another input price. */
export interface CostHandlers {
  price(value: number): void;
}

function breakText(c: TurnCost): string {
  if (c.breakTier === "first") return "first turn: cached tiers written";
  return c.breakTier === null ? "no key changed" : `breaks at ${c.breakTier}`;
}

/** The per-turn table and the totals (redrawn when the price changes). */
export function renderCostFigures(box: HTMLElement, s: State): void {
  const costs = turnCosts(s.data.turns, s.data.pricing, s.price);
  const totals = sessionTotals(costs);
  const rows = costs.map((c) =>
    row(
      [
        `turn ${c.index}`,
        breakText(c),
        num(c.read),
        num(c.write),
        num(c.uncached),
        dollars(c.cost),
        dollars(c.costWithoutCache),
      ],
      { "data-turn": c.index, class: c.index === s.turn + 1 ? "current" : "" },
    ),
  );
  const failed = s.data.turns.length - costs.length;
  replace(
    box,
    h(
      "dl",
      { class: "totals" },
      h("dt", {}, "session cost"),
      h("dd", { id: "total-cost" }, dollars(totals.cost)),
      h("dt", {}, "without caching"),
      h("dd", { id: "total-uncached" }, dollars(totals.costWithoutCache)),
      h("dt", {}, "cache-read share"),
      h("dd", { id: "read-share" }, percent(totals.readShare)),
      h("dt", {}, "tokens read from cache"),
      h("dd", { id: "read-tokens" }, `${num(totals.read)} of ${num(totals.input)}`),
    ),
    table(
      "Per turn",
      ["turn", "cache", "read", "written", "uncached", "cost", "without cache"],
      rows,
      { class: "costs" },
    ),
    failed > 0
      ? h("p", { class: "muted" }, `${failed} failed turn(s) sent nothing and are left out.`)
      : null,
  );
}

/** Draws the Cost view. */
export function renderCostView(root: HTMLElement, s: State, on: CostHandlers): void {
  const p = s.data.pricing;
  const input = h("input", {
    id: "price",
    type: "number",
    min: 0,
    step: "0.01",
    value: s.price,
    inputmode: "decimal",
  });
  input.addEventListener("input", () => {
    const v = Number(input.value);
    if (input.value !== "" && Number.isFinite(v) && v >= 0) on.price(v);
  });
  const box = h("div", { id: "cost-figures" });
  replace(
    root,
    h(
      "form",
      { class: "filters", "aria-label": "Pricing" },
      h("label", { for: "price" }, "Input price, $ per million tokens ", input),
    ),
    h(
      "p",
      { class: "muted" },
      `Cache reads cost ${p.cacheReadMultiplier}× and cache writes ${p.cacheWriteMultiplier}× of the input price. `,
      `Cached tiers (${p.cachedTiers.join(", ")}) before the tier that broke are read, from it on written; `,
      "the dynamic tier, boundary markers and any conversation are plain input. An estimate: output and minimum cacheable lengths are not counted.",
    ),
    box,
  );
  input.form?.addEventListener("submit", (e) => e.preventDefault());
  renderCostFigures(box, s);
}
