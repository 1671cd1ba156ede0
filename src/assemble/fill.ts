/**
 * Concurrent fill (docs/assembler.md): every slot's sources are asked at once, each slot under its
 * own timeout and AbortSignal. A throw, a rejection, a timeout or invalid items become a
 * failed fill with the message — never a hang or a crash. Completion order never leaks
 * into the result: fills come back in schema order and items are ranked later.
 */
import type { ContextSource, SlotSpec, SourceQuery, SourceRegistry } from "../sources/index.js";
import { versionOf } from "../sources/validated.js";
import type { SourcedItem } from "./items.js";
import type { ResolvedSlot } from "./schema.js";
import { knownUniqueIds, validateItems } from "./validate-items.js";

/**
 * What one source returned for a slot: its items, and the version token its data had
 * (`markValidated`; null when the source gives none). The layer memo compares these.
 */
export interface FillPart {
  sourceId: string;
  version: object | null;
  items: readonly SourcedItem[];
}

/** The outcome of filling one slot. */
export type SlotFill =
  | { status: "ok"; items: SourcedItem[]; sourceIds: string[]; parts: FillPart[] }
  | { status: "no_source"; items: []; sourceIds: [] }
  | {
      status: "source_failed" | "source_timeout";
      sourceId: string;
      message: string;
      sourceIds: string[];
    };

/** Wall-clock duration of each fetch, reported only under `timings`. */
export interface FetchTiming {
  slot: string;
  sourceId: string;
  ms: number;
}

/** Default per-slot fetch timeout. */
export const DEFAULT_TIMEOUT_MS = 2000;

class SourceTimeout extends Error {}

/** How a fetch failed: `source_timeout` when its deadline passed, else `source_failed`. */
export function fetchFailure(err: unknown): "source_timeout" | "source_failed" {
  return err instanceof SourceTimeout ? "source_timeout" : "source_failed";
}

/**
 * What watches the fetches of a fill from outside (the trace layer's spans, see
 * `spans.ts`): the fill runs each fetch through {@link FetchWatch.fetch} and reports each
 * skipped one (its kept part reused) to {@link FetchWatch.kept}. Watching never changes
 * what a fetch returns.
 */
export interface FetchWatch {
  /** Runs one fetch of `sourceId` for `slot`; resolves and rejects as `run` does. */
  fetch(slot: string, sourceId: string, run: () => Promise<FillPart>): Promise<FillPart>;
  /** One fetch of `sourceId` for `slot` not made: its kept part of `count` items reused. */
  kept(slot: string, sourceId: string, count: number): void;
}

/**
 * What is kept of sources' fetches between assemblies, asked before each fetch (the fill
 * step itself keeps nothing). The fill works the same with {@link NO_PART_MEMO}; the memo
 * of `memo/kept-parts.ts` reuses an unchanged source's last part instead of asking it.
 */
export interface PartMemo {
  /** What is held for `source` and `kind`. */
  held(source: ContextSource, kind: string): HeldPart;
}

/** What a {@link PartMemo} holds for one source and slot kind. */
export interface HeldPart {
  /** The kept part a fetch now would equal, or null: the source must be asked. */
  readonly reusable: FillPart | null;
  /** What the fetch made because nothing was reusable returned. */
  fetched(part: FillPart): void;
}

const NOTHING_HELD: HeldPart = { reusable: null, fetched: () => {} };

/** A {@link PartMemo} that keeps nothing: every source is asked every time. */
export const NO_PART_MEMO: PartMemo = { held: () => NOTHING_HELD };

/** What filling a slot uses besides the slot, its sources and the query. */
export interface FillEnv {
  deadlines: Deadlines;
  clock: () => number;
  /** Each fetch's duration is pushed here. */
  timings: FetchTiming[];
  parts: PartMemo;
  watch?: FetchWatch | undefined;
}

async function fetchOne(
  source: ContextSource,
  slot: SlotSpec,
  query: SourceQuery,
  signal: AbortSignal,
  parts: PartMemo,
): Promise<FillPart> {
  const held = parts.held(source, slot.kind);
  if (held.reusable !== null) return held.reusable;
  // A sync throw and an async rejection are the same failure.
  const raw = await Promise.resolve().then(() => source.fetch(slot, query, signal));
  const part: FillPart = {
    sourceId: source.id,
    version: versionOf(raw),
    items: validateItems(raw, source, slot.kind),
  };
  held.fetched(part);
  return part;
}

/** Every source's reusable part, in source order, or null when one has none. */
function allKept(
  sources: readonly ContextSource[],
  slot: SlotSpec,
  memo: PartMemo,
): FillPart[] | null {
  const parts: FillPart[] = [];
  for (const source of sources) {
    const part = memo.held(source, slot.kind).reusable;
    if (part === null) return null;
    parts.push(part);
  }
  return parts;
}

/**
 * A slot whose every source has a reusable part is filled at once: no source is asked,
 * so there is nothing to time out (no timer, no abort signal). Each skipped fetch is still
 * timed and traced, as a fetch that returned at once.
 */
function fromKept(
  slot: SlotSpec,
  sources: readonly ContextSource[],
  parts: readonly FillPart[],
  ids: string[],
  clock: () => number,
  timings: FetchTiming[],
  watch?: FetchWatch,
): SlotFill {
  for (let i = 0; i < sources.length; i++) {
    const source = sources[i] as ContextSource;
    const start = clock();
    watch?.kept(slot.kind, source.id, (parts[i] as FillPart).items.length);
    timings.push({ slot: slot.kind, sourceId: source.id, ms: clock() - start });
  }
  return mergeParts(parts, ids);
}

/**
 * The deadlines of one assembly's fetches: one abort signal and one timer per timeout
 * value, made when a slot first needs it. Every slot is asked at the same instant, so
 * slots with the same timeout would time out together anyway; sharing the signal and the
 * timer spares each slot its own (an abort signal costs tens of microseconds to make).
 * {@link Deadlines.clear} stops every timer once all slots are filled.
 */
export class Deadlines {
  readonly #byMs = new Map<
    number,
    { signal: AbortSignal; expired: Promise<never>; timer: ReturnType<typeof setTimeout> }
  >();

  /** The signal that aborts, and the promise that rejects, `timeoutMs` after its first use. */
  get(timeoutMs: number): { signal: AbortSignal; expired: Promise<never> } {
    const known = this.#byMs.get(timeoutMs);
    if (known !== undefined) return known;
    const controller = new AbortController();
    let expire: (err: SourceTimeout) => void = () => {};
    const expired = new Promise<never>((_, reject) => {
      expire = reject;
    });
    const timer = setTimeout(() => {
      controller.abort(new SourceTimeout(`timed out after ${timeoutMs} ms`));
      expire(new SourceTimeout(`timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    const entry = { signal: controller.signal, expired, timer };
    this.#byMs.set(timeoutMs, entry);
    return entry;
  }

  /** Stops every timer (no fetch is waited for any longer). */
  clear(): void {
    for (const { timer } of this.#byMs.values()) clearTimeout(timer);
    this.#byMs.clear();
  }
}

/**
 * Fills one slot from all its sources concurrently under `timeoutMs` (its deadline in
 * `env.deadlines`). On timeout the signal aborts and the slot fails with `source_timeout`;
 * item ids must be unique per slot. A source whose part `env.parts` holds is not asked;
 * with `env.watch`, each fetch runs through it.
 */
export async function fillOneSlot(
  slot: SlotSpec,
  sources: readonly ContextSource[],
  query: SourceQuery,
  timeoutMs: number,
  env: FillEnv,
): Promise<SlotFill> {
  if (sources.length === 0) return { status: "no_source", items: [], sourceIds: [] };
  const { clock, timings, watch, parts } = env;
  const ids = sources.map((s) => s.id).sort();
  const kept = allKept(sources, slot, parts);
  if (kept !== null) return fromKept(slot, sources, kept, ids, clock, timings, watch);
  const { signal, expired: timeout } = env.deadlines.get(timeoutMs);
  // Each source settles on its own so the first failure can name its source.
  const results = sources.map(async (source) => {
    const start = clock();
    const fetching = () => Promise.race([fetchOne(source, slot, query, signal, parts), timeout]);
    try {
      const part = await (watch === undefined
        ? fetching()
        : watch.fetch(slot.kind, source.id, fetching));
      return { source, part };
    } catch (err) {
      throw { source, err };
    } finally {
      timings.push({ slot: slot.kind, sourceId: source.id, ms: clock() - start });
    }
  });
  const settled = await Promise.allSettled(results);
  const failures = settled
    .map((r) =>
      r.status === "rejected" ? (r.reason as { source: ContextSource; err: unknown }) : null,
    )
    .filter((f): f is { source: ContextSource; err: unknown } => f !== null)
    .sort((a, b) => (a.source.id < b.source.id ? -1 : a.source.id > b.source.id ? 1 : 0));
  const first = failures[0];
  if (first) {
    const timedOut = first.err instanceof SourceTimeout;
    const message = first.err instanceof Error ? first.err.message : String(first.err);
    return {
      status: timedOut ? "source_timeout" : "source_failed",
      sourceId: first.source.id,
      message: `${first.source.id}: ${message}`,
      sourceIds: ids,
    };
  }
  return mergeParts(
    settled.map((r) => (r as PromiseFulfilledResult<{ part: FillPart }>).value.part),
    ids,
  );
}

/**
 * The slot's items from its sources' parts (all fetched): their items in order, failing
 * the slot when two share an id. One part whose ids validation found unique needs no check.
 */
function mergeParts(fetched: readonly FillPart[], ids: string[]): SlotFill {
  const only = fetched.length === 1 ? fetched[0] : undefined;
  if (only !== undefined && knownUniqueIds(only.items)) {
    return { status: "ok", items: [...only.items], sourceIds: ids, parts: [only] };
  }
  const items: SourcedItem[] = [];
  const parts: FillPart[] = [];
  const seen = new Map<string, string>();
  for (const part of fetched) {
    parts.push(part);
    for (const s of part.items) {
      const other = seen.get(s.item.id);
      if (other !== undefined) {
        const pair = [other, s.sourceId].sort();
        return {
          status: "source_failed",
          sourceId: pair[1] as string,
          message: `duplicate item id "${s.item.id}" from ${pair.join(" and ")}`,
          sourceIds: ids,
        };
      }
      seen.set(s.item.id, s.sourceId);
      items.push(s);
    }
  }
  return { status: "ok", items, sourceIds: ids, parts };
}

/**
 * The fill step: every slot's sources asked at once (slots with the same timeout share one
 * deadline, see {@link Deadlines}), each slot under its own `timeoutMs` or else
 * `defaultTimeoutMs`; the fills come back in slot order, whatever order the fetches end in.
 */
export async function fillSlots(
  slots: readonly ResolvedSlot[],
  registry: SourceRegistry,
  query: SourceQuery,
  defaultTimeoutMs: number,
  env: Omit<FillEnv, "deadlines">,
): Promise<SlotFill[]> {
  const deadlines = new Deadlines();
  const withDeadlines: FillEnv = { ...env, deadlines };
  try {
    return await Promise.all(
      slots.map((slot) =>
        fillOneSlot(
          slot,
          registry.sourcesFor(slot.kind),
          query,
          slot.timeoutMs ?? defaultTimeoutMs,
          withDeadlines,
        ),
      ),
    );
  } finally {
    deadlines.clear();
  }
}
