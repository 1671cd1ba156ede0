/**
 * The turn list: one option per recorded turn, a listbox moved through with the arrow keys;
 * on a narrow screen the same turns in a `<select>` (the turn picker). Each turn is told
 * apart by its number, its clock and a snippet of its query (the user's message).
 */
import { h, num, replace } from "./dom.js";
import { assemblyOf, cacheBreak, type State } from "./model.js";
import type { TurnView } from "./types.js";

function clock(t: TurnView): string {
  const at = t.now ?? t.at;
  const m = /T(\d\d:\d\d(?::\d\d)?)/.exec(at);
  return m?.[1] ?? at;
}

const SNIPPET = 48;

/** The start of a turn's query, on one line, cut at a word near {@link SNIPPET} chars. */
export function snippet(query: string): string {
  const flat = query.replace(/\s+/g, " ").trim();
  if (flat === "") return "(no query)";
  const chars = [...flat];
  if (chars.length <= SNIPPET) return flat;
  const cut = chars.slice(0, SNIPPET - 1).join("");
  const word = cut.replace(/\s+\S*$/, "");
  return `${word.length >= SNIPPET / 2 ? word : cut}…`;
}

/**
 * A turn's one-line label: number, kind, clock and query snippet.
 *
 * @example turnLabel(turn) // "3 · assemble · 09:10:00 · write the release note for the…"
 */
export function turnLabel(t: TurnView): string {
  return `${t.index} · ${t.kind} · ${clock(t)} · ${snippet(t.query)}`;
}

/** The short cache note of a turn against the turn before it. */
function cacheNote(s: State, i: number): string {
  const a = assemblyOf(s.data.turns[i]);
  if (a === null) return "failed";
  const prev = assemblyOf(s.data.turns[i - 1]);
  if (prev === null) return `${num(a.manifest.used.tokens)} tok`;
  const brk = cacheBreak(prev.manifest.cacheKeys, a.manifest.cacheKeys);
  return `${num(a.manifest.used.tokens)} tok · ${brk === null ? "cache kept" : `breaks at ${brk}`}`;
}

/** Draws the list, the current turn selected and announced. */
export function renderTurnList(list: HTMLElement, s: State, goTo: (i: number) => void): void {
  const items = s.data.turns.map((t, i) => {
    const li = h(
      "div",
      {
        id: `turn-${t.index}`,
        role: "option",
        "aria-selected": String(i === s.turn),
        "data-turn": t.index,
      },
      h("span", { class: "turn-n" }, `${t.index}`),
      h(
        "span",
        { class: "turn-what" },
        `${t.kind} · ${clock(t)}`,
        h("small", { title: t.query }, snippet(t.query)),
      ),
      h("span", { class: "turn-note" }, cacheNote(s, i)),
    );
    li.addEventListener("click", () => goTo(i));
    return li;
  });
  replace(list, ...items);
  list.setAttribute("aria-activedescendant", `turn-${s.turn + 1}`);
  document.getElementById(`turn-${s.turn + 1}`)?.scrollIntoView({ block: "nearest" });
}

/** Fills the turn picker (the narrow screen's `<select>`), the current turn selected. */
export function renderTurnPicker(select: HTMLSelectElement, s: State): void {
  const options = s.data.turns.map((t, i) =>
    h("option", { value: i, selected: i === s.turn }, turnLabel(t)),
  );
  replace(select, ...options);
  select.value = String(s.turn);
}

/** Arrow keys, Home and End on the list. */
export function turnKeys(e: KeyboardEvent, s: State, goTo: (i: number) => void): void {
  const moves: Record<string, number> = {
    ArrowUp: s.turn - 1,
    ArrowLeft: s.turn - 1,
    ArrowDown: s.turn + 1,
    ArrowRight: s.turn + 1,
    Home: 0,
    End: s.data.turns.length - 1,
  };
  const to = moves[e.key];
  if (to === undefined) return;
  e.preventDefault();
  goTo(to);
}
