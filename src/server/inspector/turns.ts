/** The turn list: one option per recorded turn, a listbox moved through with the arrow keys. */
import { h, num, replace } from "./dom.js";
import { assemblyOf, cacheBreak, type State } from "./model.js";
import type { TurnView } from "./types.js";

function clock(t: TurnView): string {
  const at = t.now ?? t.at;
  const m = /T(\d\d:\d\d(?::\d\d)?)/.exec(at);
  return m?.[1] ?? at;
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
        h("small", {}, t.query === "" ? "(no query)" : t.query),
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
