/** Prints the chat's events: one JSON object per line (`--json`), or text lines for people. */
import type { ChatEvent, ChatReplyEvent, ChatTurnEvent } from "../../agent/index.js";
import type { ChatIO } from "./io.js";

/** Why the chat ended: input ran out, `/exit` or `/quit`, or `--max-turns` lines answered. */
export type ChatEndReason = "end_of_input" | "exit" | "max_turns";

function compact(value: unknown, max = 120): string {
  const s = JSON.stringify(value) ?? String(value);
  const cps = [...s];
  return cps.length <= max ? s : `${cps.slice(0, max - 1).join("")}…`;
}

function turnText(e: ChatTurnEvent): string {
  return [
    `── turn ${e.turn} · ${e.now} · skills: ${e.skills.join(", ") || "none"} · red lines: ${e.redLines.length}`,
    ...e.redLineProblems.map((p) => `  red line skipped: ${p}`),
  ].join("\n");
}

/** The draft (unless withheld), its violations, and the verdict; null when there is nothing to say. */
function replyText(e: ChatReplyEvent): string | null {
  const { check } = e;
  const lines: string[] = [];
  if (e.text !== null && e.text !== "") lines.push(`assistant: ${e.text}`);
  for (const v of check.violations) {
    lines.push(
      `  red line ${v.redLineId} (${v.severity}) at ${v.span.start}-${v.span.end}: ${v.excerpt}${v.flagged ? "  [flagged for review]" : ""}`,
    );
  }
  if (e.withheld) {
    const blocking = check.violations.filter((v) => v.severity === "block");
    const ids = [...new Set(blocking.map((v) => v.redLineId))].join(", ");
    lines.push(
      check.incomplete !== null
        ? `draft withheld: red-line check incomplete (${check.incomplete})`
        : `draft withheld: red line ${ids}`,
    );
  } else if (e.flagged) {
    lines.push(`draft flagged for review: ${check.redLineIds.join(", ")}`);
  }
  return lines.length > 0 ? lines.join("\n") : null;
}

function eventText(e: ChatEvent): string | null {
  switch (e.event) {
    case "turn":
      return turnText(e);
    case "reply":
      return replyText(e);
    case "tool":
      return `  tool ${e.name} ${compact(e.input)} → ${e.ok ? "ok" : "failed"}: ${e.summary}`;
    case "limit":
      return `tool round limit (${e.maxToolRounds}) reached: ${e.unanswered} call(s) not run`;
    case "compaction":
      return `  history compacted: ${e.summarizedIds.length} message(s), ${e.summarizedTokens} tokens → ${e.summaryId}`;
  }
}

/** Prints events as text lines or JSON lines. */
export class Printer {
  constructor(
    private readonly io: ChatIO,
    private readonly json: boolean,
  ) {}

  private write(obj: object, text: string | null): void {
    if (this.json) this.io.output.write(`${JSON.stringify(obj)}\n`);
    else if (text !== null) this.io.output.write(text.endsWith("\n") ? text : `${text}\n`);
  }

  /** One event of a turn. */
  event(e: ChatEvent): void {
    this.write(e, eventText(e));
  }

  /** A report asked for by a command (`/context`): its JSON, or its text. */
  report(obj: object, text: string): void {
    this.write(obj, text);
  }

  /** The last line: how many turns ran and why the chat ended. */
  end(turns: number, reason: ChatEndReason, maxTurns: number): void {
    this.write(
      { event: "end", turns, reason },
      reason === "max_turns" ? `max turns reached (${maxTurns})` : null,
    );
  }
}
