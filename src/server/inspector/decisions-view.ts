/**
 * The Decisions view: every decision table of the turn (layers, memory, skills, KB chunks,
 * other items, conversation) with its reasons, filtered by status, reason and text.
 */
import { h, num, replace, row, table } from "./dom.js";
import {
  assemblyOf,
  type DecisionRow,
  decisionRows,
  distinct,
  matchText,
  matchTitle,
  rowMatches,
  type State,
  TABLE_TITLES,
  TABLES,
  type TableName,
} from "./model.js";
import type { AssemblyView } from "./types.js";

/** What the view reports back: a changed filter. */
export interface DecisionHandlers {
  filter(change: Partial<Pick<State, "status" | "reason" | "search">>): void;
}

const HEADS: Record<TableName, string[]> = {
  layers: ["layer", "status", "reason", "tokens", "detail"],
  memory: ["memory", "status", "reason", "score", "match", "detail"],
  skills: ["slot", "skill", "status", "reason", "detail"],
  kb: ["chunk", "status", "reason", "detail"],
  items: ["slot", "item", "status", "reason", "detail"],
  conversation: ["message", "status", "reason", "tokens", "detail"],
};

function cells(r: DecisionRow): Array<string | HTMLElement> {
  const status = h("span", { class: `badge status-${r.status}` }, r.status);
  // A memory the takeover gate held stands out: it tried to steer the model.
  const reason = h(
    "code",
    r.reason === "quarantined" ? { class: "reason-quarantined" } : {},
    r.reason,
  );
  switch (r.table) {
    case "layers":
    case "conversation":
      return [r.id, status, reason, num(r.tokens ?? 0), r.detail];
    case "memory": {
      // How the recall found it: the path and ranks in the cell, every figure on hover.
      const match = h(
        "span",
        r.match === null
          ? { class: "match match-none muted" }
          : { class: `match match-${r.match.path}`, title: matchTitle(r.match) },
        matchText(r.match),
      );
      return [r.id, status, reason, (r.score ?? 0).toFixed(3), match, r.detail];
    }
    case "kb":
      return [r.id, status, reason, r.detail];
    default:
      return [r.layer, r.id, status, reason, r.detail];
  }
}

function select(
  id: string,
  label: string,
  values: readonly string[],
  current: string,
): HTMLElement {
  const el = h(
    "select",
    { id, name: id },
    h("option", { value: "" }, "any"),
    ...values.map((v) => h("option", { value: v, selected: v === current }, v)),
  );
  return h("label", { for: id }, `${label} `, el);
}

/** Draws the tables under the filters (the filters keep their focus). */
export function renderDecisionTables(box: HTMLElement, s: State): void {
  const a = assemblyOf(s.data.turns[s.turn]) as AssemblyView;
  const all = decisionRows(a);
  const tables: HTMLElement[] = [];
  let shown = 0;
  for (const name of TABLES) {
    const rows = all.filter((r) => r.table === name);
    if (rows.length === 0) continue;
    const kept = rows.filter((r) => rowMatches(r, s));
    shown += kept.length;
    const body = kept.map((r) => row(cells(r), { class: `status-${r.status}`, "data-id": r.id }));
    tables.push(
      table(`${TABLE_TITLES[name]} · ${kept.length} of ${rows.length}`, HEADS[name], body, {
        class: "decisions",
        "data-table": name,
      }),
    );
  }
  replace(
    box,
    h("p", { class: "muted", id: "decision-count" }, `${shown} of ${all.length} decisions shown`),
    ...tables,
  );
}

/** Draws the Decisions view of the current turn. */
export function renderDecisionsView(root: HTMLElement, s: State, on: DecisionHandlers): void {
  const a = assemblyOf(s.data.turns[s.turn]) as AssemblyView;
  const rows = decisionRows(a);
  const search = h("input", {
    id: "filter-search",
    type: "search",
    value: s.search,
    placeholder: "id, slot, detail or match",
  });
  const controls = h(
    "form",
    { class: "filters", role: "search", "aria-label": "Filter decisions" },
    select("filter-status", "Status", distinct(rows.map((r) => r.status)), s.status),
    select("filter-reason", "Reason", distinct(rows.map((r) => r.reason)), s.reason),
    h("label", { for: "filter-search" }, "Text ", search),
  );
  controls.addEventListener("submit", (e) => e.preventDefault());
  controls.addEventListener("input", (e) => {
    const t = e.target;
    if (t instanceof HTMLSelectElement && t.id === "filter-status") on.filter({ status: t.value });
    if (t instanceof HTMLSelectElement && t.id === "filter-reason") on.filter({ reason: t.value });
    if (t instanceof HTMLInputElement) on.filter({ search: t.value });
  });
  const box = h("div", { id: "decision-tables" });
  replace(root, controls, box);
  renderDecisionTables(box, s);
}
