/**
 * The stateless window start of a whole request (docs/conversation.md "the agent loop with
 * defaults"): derived from the conversation itself, so requests over a growing
 * conversation share their window start — and the provider's cached prefix — without the
 * caller carrying an anchor from one request to the next.
 */
import {
  type ConversationDecision,
  type ConversationPlan,
  type ConversationPolicyInput,
  digestConversation,
  MESSAGE_OVERHEAD_TOKENS,
  type Message,
  type MessageInput,
  partTokens,
  quotedLines,
  sent,
  type TurnSizes,
} from "../../conversation/index.js";
import type { TokenCounter } from "../../tokens/index.js";

/**
 * The window start on the grid of `stepTokens`: among the user messages, the oldest
 * whose window fits the budget is `S_min` (the window is everything from a start to the
 * end, plus pinned messages before it); the start is the first user message at or after
 * the first grid line (`k × stepTokens` tokens of history before it, from the
 * conversation's first message) at or after `S_min` — or `S_min` itself when it is held:
 * the first user message at or after a grid line, the user message before it not on the
 * grid (the start of the requests before, while older starts fit). A held start stays
 * while its window fits (moving it would drop history for nothing and break the cache a
 * step early: measured on the long task with nudges at 200k, seed 2, 89.4 % read from the
 * cache instead of 90.1 %); then the start moves by about `stepTokens`. Where every user
 * message is on the grid (turns of a step or more, as at 64k), the start stays a grid line
 * ahead of `S_min`, leaving room to grow: holding `S_min` there kept the window full and
 * moved it every turn (the long task at 64k, seed 2: 0.83× the server-side clearing cost
 * instead of 0.54×). Returns null when nothing has to be dropped or no user message can
 * start the window.
 *
 * `plan` is a plan of the same conversation under the same budget (any window start):
 * its decisions give every message's tokens after transforms. `tokens`, when given,
 * overrides them per message: the history before the current turn as the turn's first
 * request sent it ({@link StatelessClearing.windowTokens}). Within one turn those sizes
 * stay fixed and the turn only grows, so the start only moves forward — even when later
 * clearing shrinks the history (a start chosen by sizes that shrink could move back).
 * Once the current turn itself had older rounds cleared or dropped to fit, the window is
 * that turn: it starts at its ask from then on (the turn outgrew the trigger; clearing
 * more of it must not let older turns back in).
 *
 * Across turns, `turnTokens` ({@link StatelessClearing.turnTokens}) gives the sizes each
 * earlier turn's requests found their start on: the start is never before the one the last
 * request of any earlier turn chose (found again on those sizes; a turn that outgrew
 * `turnTrigger` on its own started at its ask), so it moves forward only over the whole
 * conversation — at a new user message too, where the history the turn before left may
 * have shrunk by clearing since.
 *
 * @example gridWindowStart(firstPlan, 40_000) // "u37": pass it as `policy.anchor`
 */
export function gridWindowStart(
  plan: ConversationPlan,
  stepTokens: number,
  tokens?: readonly number[],
  turnTokens?: (ask: number) => TurnSizes,
  turnTrigger?: number,
): string | null {
  const ds = plan.decisions;
  const turns = turnsOf(ds);
  const { starts } = turns;
  const n = ds.length;
  const last = ds[n - 1]?.turn ?? 0;
  const ask = starts[starts.length - 1];
  if (ask === undefined) return null;
  const step = Math.max(1, Math.floor(stepTokens));
  let best: number | null;
  if (turnStepped(ds, ask)) best = ask > 0 ? ask : null;
  else {
    const size = (i: number): number => tokens?.[i] ?? sent(ds[i] as ConversationDecision);
    // Rounds of the current turn dropped to fit it are not in any window.
    const out = (i: number): boolean => {
      const d = ds[i] as ConversationDecision;
      return d.turn === last && d.status === "dropped";
    };
    const sums = [0];
    const outs = [0];
    for (let i = 0; i < n; i++) {
      sums.push((sums[i] as number) + size(i));
      outs.push((outs[i] as number) + (out(i) ? size(i) : 0));
    }
    const sized: Sized = {
      size,
      sumBefore: (i) => sums[i] as number,
      outBefore: (i) => outs[i] as number,
    };
    const dropsAny = ds.some((d) => d.reason === "history_window");
    best = startOnGrid(turns, starts.length, n, sized, plan.budgetTokens, step, dropsAny);
  }
  if (turnTokens !== undefined)
    best = earlierTurnsStart(plan, turns, step, turnTokens, best, turnTrigger);
  return best === null ? null : (ds[best]?.messageId ?? null);
}

/** What a window start is searched over: the decisions, where turns start, the pinned. */
interface Turns {
  readonly ds: readonly ConversationDecision[];
  /** Indices of the user messages that start a turn, in order. */
  readonly starts: readonly number[];
  /** Indices of the pinned messages, in order. */
  readonly pinned: readonly number[];
}

function turnsOf(ds: readonly ConversationDecision[]): Turns {
  const starts: number[] = [];
  const pinned: number[] = [];
  for (let i = 0; i < ds.length; i++) {
    if (isTurnStart(ds, i)) starts.push(i);
    if ((ds[i] as ConversationDecision).reason === "pinned") pinned.push(i);
  }
  return { ds, starts, pinned };
}

/**
 * The start kept at or after the one the last request of each earlier turn chose (newest
 * first): a turn's requests start at or before its ask, so once `best` is past an ask, no
 * earlier turn can move it. A turn whose history fits the budget on its sizes started
 * nowhere (no pass over it needed).
 */
function earlierTurnsStart(
  plan: ConversationPlan,
  turns: Turns,
  step: number,
  turnTokens: (ask: number) => TurnSizes,
  found: number | null,
  turnTrigger: number | undefined,
): number | null {
  const { ds, starts } = turns;
  const own = ownTokens(ds, turns.pinned);
  let best = found;
  for (let k = starts.length - 2; k >= 0; k--) {
    const at = starts[k] as number;
    if (best !== null && best >= at) break;
    const end = starts[k + 1] as number;
    const sizes = turnTokens(at);
    let then: number | null = null;
    if (turnTrigger !== undefined && own(at, end, sizes.size) > turnTrigger) then = at;
    else if (
      (sizes.sumBeforeAtMost ?? sizes.sumBefore)(end) > plan.budgetTokens &&
      sizes.sumBefore(end) > plan.budgetTokens
    ) {
      const sized = { ...sizes, outBefore: none };
      then = startOnGrid(turns, k + 1, end, sized, plan.budgetTokens, step, null);
    }
    if (then !== null && (best === null || then > best)) best = then;
  }
  return best;
}

const none = (): number => 0;

/**
 * Tokens of a turn's messages (from its ask to `end`) as given — before clearing or
 * truncation, as the turn's own trigger counts them in a whole request
 * (`turnTriggerUncut`) — and of the pinned ones before it (by `size`). Prefix sums are
 * taken once, so each turn costs its pinned messages only.
 */
function ownTokens(
  ds: readonly ConversationDecision[],
  pinned: readonly number[],
): (ask: number, end: number, size: (i: number) => number) => number {
  const whole = [0];
  ds.forEach((d, i) => {
    whole.push((whole[i] as number) + givenTokens(d));
  });
  return (ask, end, size) => {
    let own = (whole[end] as number) - (whole[ask] as number);
    for (const i of pinned) {
      if (i >= ask) break;
      own += size(i);
    }
    return own;
  };
}

/** What a window-start search reads of the messages' sizes. */
interface Sized {
  readonly size: (i: number) => number;
  /** Tokens of the messages before `i` (by `size`). */
  readonly sumBefore: (i: number) => number;
  /** Tokens of the messages before `i` left out of every window. */
  readonly outBefore: (i: number) => number;
}

/**
 * A message's tokens as given: before clearing or truncation (stray parts removed stay
 * out), 0 for an orphan the planner removed (it is never sent).
 *
 * @example givenTokens(plan.decisions[3]) // 18_204 for a result cleared to a 40-token notice
 */
export function givenTokens(d: ConversationDecision): number {
  if (d.reason === "orphan_removed") return 0;
  let w = d.tokens;
  for (const t of d.transforms) {
    if (t.kind !== "stray_part_removed") w = Math.max(w, t.originalTokens);
  }
  return w;
}

/**
 * The grid start among the first `count` turn starts, over the first `n` messages, sized
 * by `sized`, in `budget`: an index, or null when everything fits (`dropsAny` false: the
 * plan dropped nothing; null: decided by the sizes) or no start fits. Found by bisection
 * on sums, without a pass over the messages: a start's window — its messages to the end,
 * and the pinned ones before it — only grows as the start moves back (a message it passes
 * joins the window, or was already in it as pinned; one left out is never pinned), so the
 * starts that fit are the newest ones; and the tokens before a start only grow as it
 * moves forward. The oldest fitting start is held when it is on the grid and the start
 * before it is not ({@link gridWindowStart}); otherwise the first start on the grid line
 * at or after it is chosen.
 */
function startOnGrid(
  turns: Turns,
  count: number,
  n: number,
  sized: Sized,
  budget: number,
  step: number,
  dropsAny: boolean | null,
): number | null {
  const { starts } = turns;
  const { size, sumBefore, outBefore } = sized;
  const sent = sumBefore(n) - outBefore(n);
  const fits = (k: number): boolean => {
    const s = starts[k] as number;
    let window = sent - (sumBefore(s) - outBefore(s));
    for (const i of turns.pinned) {
      if (i >= s) break;
      window += size(i);
    }
    return window <= budget;
  };
  const oldest = firstAtOrAfter(0, count, fits);
  if (oldest === count) return null;
  if (oldest === 0 && (dropsAny === false || (dropsAny === null && sent <= budget))) return null;
  const first = starts[oldest] as number;
  if (heldOnGrid(oldest, starts, sumBefore, step)) return first;
  const line = Math.ceil(sumBefore(first) / step) * step;
  const on = firstAtOrAfter(oldest, count, (k) => sumBefore(starts[k] as number) >= line);
  return on === count ? first : (starts[on] as number);
}

/**
 * Whether the turn start `k` is held: on the grid — the first user message at or after a
 * grid line (the first start is, line 0) — with the start before it not on the grid.
 */
function heldOnGrid(
  k: number,
  starts: readonly number[],
  sumBefore: (i: number) => number,
  step: number,
): boolean {
  const cell = (j: number): number =>
    j < 0 ? -1 : Math.floor(sumBefore(starts[j] as number) / step);
  const onGrid = (j: number): boolean => j >= 0 && cell(j) > cell(j - 1);
  return onGrid(k) && !onGrid(k - 1);
}

/** The first k in [lo, hi) where `holds` (false before it, true from it on), or `hi`. */
function firstAtOrAfter(lo: number, hi: number, holds: (k: number) => boolean): number {
  let a = lo;
  let b = hi;
  while (a < b) {
    const mid = (a + b) >>> 1;
    if (holds(mid)) b = mid;
    else a = mid + 1;
  }
  return a;
}

/** Whether older rounds of the current turn (from `ask`) were cleared or dropped to fit it. */
function turnStepped(ds: readonly ConversationDecision[], ask: number): boolean {
  for (let i = ask + 1; i < ds.length; i++) {
    const d = ds[i] as ConversationDecision;
    if (d.reason === "history_window") return true;
    if (d.transforms.some((t) => t.kind === "tool_result_cleared")) return true;
  }
  return false;
}

/** A user message's decision starts a turn (turn numbers rise at each user message). */
function isTurnStart(ds: readonly ConversationDecision[], i: number): boolean {
  const d = ds[i] as ConversationDecision;
  const prev = ds[i - 1];
  return d.turn > 0 && (prev === undefined || prev.turn !== d.turn);
}

/** Tokens of the lines of a message's tool results that quote ids (as a digest lists them). */
function idLineTokens(m: MessageInput, counter: TokenCounter): number {
  let n = 0;
  for (const p of m.content) {
    if (p.type !== "tool_result") continue;
    for (const q of quotedLines(p.output)) if (q.tier === 0) n += counter.count(`\n- ${q.text}`);
  }
  return n;
}

/** The line the window digest opens with (counted in its budget). */
export const WINDOW_DIGEST_HEADER =
  "Earlier in this conversation (a digest of what left the window):";

/**
 * The messages with a digest of what left the window put at the window's start: the run
 * of messages just before `anchorId` (walking back until `reachTokens` of them, pinned
 * ones skipped: the turns the last moves dropped, the ones the next turns still ask about), as
 * {@link digestConversation} writes it under `maxTokens`, prepended as a text part to the
 * anchor's message. It depends only on the messages before the window start, so it
 * changes when the window moves — when the cache breaks anyway — and never in between.
 * Returns `messages` itself when nothing was dropped before the anchor.
 *
 * @example withWindowDigest(messages, firstPlan, "u37", 14_000, counter, 2000) // u37 opens with the digest
 */
export function withWindowDigest(
  messages: readonly MessageInput[],
  plan: ConversationPlan,
  anchorId: string,
  reachTokens: number,
  counter: TokenCounter,
  maxTokens: number,
): readonly MessageInput[] {
  const at = messages.findIndex((m) => m.id === anchorId);
  const ds = plan.decisions;
  // By position, not by what `plan` kept: the run depends on the anchor alone, so every
  // request with this window start carries the same digest. Pinned messages are sent anyway.
  const room = maxTokens - counter.count(WINDOW_DIGEST_HEADER) - MESSAGE_OVERHEAD_TOKENS;
  const run: MessageInput[] = [];
  // Back until the lines quoting ids would fill the digest (the newest are kept first, so
  // older ones would be cut anyway), or `reachTokens` of history (a bound on the work).
  for (let i = at - 1, covered = 0, ids = 0; i >= 0 && covered < reachTokens && ids < room; i--) {
    const d = ds[i] as ConversationDecision;
    if (d.reason === "pinned") continue;
    // Tokens as given (before clearing or truncation): a later clearing step that shrinks
    // these messages must not change the run, or the digest — and the cache — with it.
    covered += d.transforms[0]?.originalTokens ?? d.tokens;
    ids += idLineTokens(messages[i] as MessageInput, counter);
    run.push(messages[i] as MessageInput);
  }
  if (run.length === 0 || room <= 0) return messages;
  const text = digestConversation(run.reverse(), counter, room);
  const anchor = messages[at] as MessageInput;
  if (text === "") return messages;
  const digest = { type: "text" as const, text: `${WINDOW_DIGEST_HEADER}\n${text}` };
  const out = messages.slice();
  out[at] = { ...anchor, content: [digest, ...anchor.content] };
  return out;
}

/**
 * `plan` with the digest of what left its window ({@link withWindowDigest} at its
 * `firstKeptId`) opening the window's first message: the same window, clearing and
 * decisions, that message counting the digest's tokens more, in `budgetTokens` (the room
 * `plan` was made in, less at most `maxTokens`, plus them). For a window the caller holds
 * (`policy.anchor`): the plan is made in the room less the digest, so the digest fits and
 * the anchor, the clearing boundary and every trigger are those of that room on every
 * request; the digest depends only on the messages before the window start, so it changes
 * only when the window moves. Returns `plan` itself when nothing was dropped before it.
 *
 * @example withPlanDigest(messages, plan, 512_000, counter, 2000, 50_000).messages[0] // opens with the digest
 */
export function withPlanDigest(
  messages: readonly MessageInput[],
  plan: ConversationPlan,
  reachTokens: number,
  counter: TokenCounter,
  maxTokens: number,
  budgetTokens: number,
): ConversationPlan {
  const start = plan.firstKeptId;
  const digested = withWindowDigest(messages, plan, start, reachTokens, counter, maxTokens);
  if (digested === messages) return plan;
  const at = messages.findIndex((m) => m.id === start);
  const part = (digested[at] as MessageInput).content[0] as { type: "text"; text: string };
  const k = plan.messages.findIndex((m) => m.id === start);
  const opened = plan.messages[k] as Message;
  const out = plan.messages.slice();
  out[k] = { ...opened, content: [part, ...opened.content] };
  const extra = partTokens(part, counter);
  const decisions = plan.decisions.slice();
  const d = decisions[at] as ConversationDecision;
  decisions[at] = { ...d, tokens: d.tokens + extra };
  return {
    ...plan,
    messages: out,
    decisions,
    usedTokens: plan.usedTokens + extra,
    budgetTokens,
  };
}

/**
 * History, in rooms, past which a window held by the caller's anchor takes no clearing
 * step before the room is full ({@link heldPlan}).
 * Held clearing has no batches, so early on its steps at the trigger are what keeps a
 * short task cheap; later each step moves the window anyway. Measured on the long task
 * with nudges at 200k (agent-long), stateful: 2 rooms read 92.2 % from the cache on seed
 * 14 (109 rounds) for 0.86× the server-side clearing cost, 1 room 92.9 % for 0.97×; no
 * reach, 89.7 % on seed 2.
 */
export const HELD_REACH_ROOMS = 2;

/**
 * The plan under the caller's anchor in `room`. Past {@link HELD_REACH_ROOMS} rooms of
 * history (tokens as given), clearing under pressure waits for the whole room
 * (`clearTrigger` 1): as without an anchor, where clearing takes no step past its reach
 * and the window moves only when it no longer fits. A step there moves the window anyway,
 * so one taken at the trigger's share of the room only breaks the cache sooner and more
 * often (measured on the long task with nudges at 200k, seed 2: 89.7 → 91.7 % read from
 * the cache).
 *
 * @example heldPlan(messages, 180_000, { anchor: "u7", clearTrigger: 0.8 }, plan).firstKeptId // "u7" while it fits
 */
export function heldPlan(
  messages: readonly MessageInput[],
  room: number,
  policy: ConversationPolicyInput | undefined,
  plan: (m: readonly MessageInput[], b: number, p?: ConversationPolicyInput) => ConversationPlan,
): ConversationPlan {
  const held = plan(messages, room, policy);
  const trigger = policy?.clearTrigger ?? null;
  if (trigger === null || trigger >= 1) return held;
  let given = 0;
  for (const d of held.decisions) given += givenTokens(d);
  if (given <= HELD_REACH_ROOMS * room) return held;
  return plan(messages, room, { ...policy, clearTrigger: 1 });
}
