/**
 * Heading renderers (spec 04): one function driven by a locale table. A locale is data —
 * headings per kind, a heading format, a recall-line format and a list-item prefix — so
 * callers add a language without writing a renderer.
 */
import { z } from "zod";
import { InvalidInputError, invalidFromZod } from "../errors/index.js";
import type { SourceItem } from "../sources/index.js";
import { cpLength, formatFixed, isBlank, textString } from "../text/index.js";
import { renderFramed, type SlotFrame, type SlotRenderer } from "./types.js";

/** How recall lines (kind `recall_memory`) show importance and combined score. */
export interface RecallLineFormat {
  /** Line template with `{text}` and `{details}` (the present details joined by `separator`). */
  readonly line: string;
  /** Detail template for importance, `{value}` is the formatted number. */
  readonly importance: string;
  /** Detail template for the combined score, `{value}` is the formatted number. */
  readonly score: string;
  readonly separator: string;
  /** Decimals of both values (half to even on the exact binary value, spec 01). */
  readonly digits: number;
}

/** A locale as data. Templates use `{name}` placeholders, filled in one pass. */
export interface LocaleTable {
  /** Heading text per slot kind; other kinds use the slot title, then the kind itself. */
  readonly headings: Readonly<Record<string, string>>;
  /** Heading line template with `{title}`. */
  readonly headingFormat: string;
  /** Prefix of every item line. */
  readonly itemPrefix: string;
  readonly recall: RecallLineFormat;
}

const withPlaceholder = (name: string) =>
  textString.refine((s) => s.includes(`{${name}}`), { message: `must contain {${name}}` });

/** Validates a {@link LocaleTable} given by a caller. */
export const LocaleTableSchema = z.object({
  headings: z.record(textString, textString),
  headingFormat: withPlaceholder("title"),
  itemPrefix: textString,
  recall: z.object({
    line: withPlaceholder("text"),
    importance: withPlaceholder("value"),
    score: withPlaceholder("value"),
    separator: textString,
    digits: z.number().int().min(0).max(20),
  }),
});

/** The built-in locales. */
export const LOCALES: Readonly<Record<"en" | "zh-CN", LocaleTable>> = Object.freeze({
  en: Object.freeze({
    headings: Object.freeze({
      constraints: "Constraints",
      planner: "Task plan",
      task_memory: "Task observations",
      tool_state: "Tools",
      profile: "User profile",
      recall_memory: "Related memories",
    }),
    headingFormat: "## {title}",
    itemPrefix: "- ",
    recall: Object.freeze({
      line: "{text} ({details})",
      importance: "importance={value}",
      score: "score={value}",
      separator: ", ",
      digits: 2,
    }),
  }),
  "zh-CN": Object.freeze({
    headings: Object.freeze({
      constraints: "硬性约束",
      planner: "任务规划",
      task_memory: "任务观察",
      tool_state: "可用工具",
      profile: "用户画像",
      recall_memory: "相关回忆",
    }),
    headingFormat: "【{title}】",
    itemPrefix: "- ",
    recall: Object.freeze({
      line: "{text}（{details}）",
      importance: "重要性={value}",
      score: "综合分={value}",
      separator: ", ",
      digits: 2,
    }),
  }),
});

// One pass over the template: substituted values are never scanned again, and `$`
// patterns in them mean nothing.
function fill(template: string, vars: Readonly<Record<string, string>>): string {
  return template.replace(/\{(\w+)\}/g, (m, key: string) =>
    Object.hasOwn(vars, key) ? (vars[key] as string) : m,
  );
}

/**
 * Builds a heading renderer from a locale table (validated here; a bad table is
 * `InvalidInputError` with path `locale.…`). Heading text: `slot.title` when given,
 * else the table's heading for the kind, else the kind itself — always formatted by
 * `headingFormat`. Recall lines append importance and score when present.
 *
 * @example
 * const fr = createHeadingRenderer("fr", { ...LOCALES.en, headings: { constraints: "Contraintes" } });
 * fr.renderSlot({ kind: "constraints" }, [{ id: "r1", text: "[forbid] no rm -rf" }], { userScope: "u1" });
 * // "## Contraintes\n- [forbid] no rm -rf"
 */
export function createHeadingRenderer(name: string, locale: LocaleTable): SlotRenderer {
  if (typeof name !== "string" || isBlank(name)) {
    throw new InvalidInputError("renderer name must not be blank", "name");
  }
  const parsed = LocaleTableSchema.safeParse(locale);
  if (!parsed.success) throw invalidFromZod(parsed.error, ["locale"]);
  const table: LocaleTable = parsed.data;
  const headingText = (slot: { kind: string; title?: string }): string => {
    if (slot.title !== undefined) return slot.title;
    return Object.hasOwn(table.headings, slot.kind)
      ? (table.headings[slot.kind] as string)
      : slot.kind;
  };
  const recallLine = (item: SourceItem): string => {
    const r = table.recall;
    const details: string[] = [];
    if (item.importance !== undefined) {
      details.push(fill(r.importance, { value: formatFixed(item.importance, r.digits) }));
    }
    if (item.score !== undefined) {
      details.push(fill(r.score, { value: formatFixed(item.score, r.digits) }));
    }
    if (details.length === 0) return item.text;
    return fill(r.line, { text: item.text, details: details.join(r.separator) });
  };
  const frame = (slot: { kind: string; title?: string; itemStyle?: "list" | "block" }) => {
    const heading = fill(table.headingFormat, { title: headingText(slot) });
    // Documents (instruction files, skill bodies) read as blocks, not as list items.
    if (slot.itemStyle === "block") return new BlockFrame(heading);
    return new ListFrame(
      heading,
      table.itemPrefix,
      slot.kind === "recall_memory" ? recallLine : null,
    );
  };
  return {
    name,
    renderSlot: (slot, items) => (items.length === 0 ? "" : renderFramed(frame(slot), items)),
    frame,
  };
}

// Frames are class instances, not literals of closures: optimized code that calls them
// then depends on long-lived classes, not on per-slot closures that die after each
// assembly (V8 discards code tied to dead objects, "weak objects", after a full GC).

/** Documents as paragraphs: `heading\n\ntext\n\ntext`. */
class BlockFrame implements SlotFrame {
  readonly separator = "\n\n";
  readonly tail = "";
  constructor(private readonly heading: string) {}
  head(): string {
    return `${this.heading}\n\n`;
  }
  line(item: SourceItem): string {
    return item.text;
  }
  lineChars(item: SourceItem): number {
    return cpLength(item.text);
  }
}

/** One prefixed line per item: `heading\n- text\n- text` (recall lines show their figures). */
class ListFrame implements SlotFrame {
  readonly separator = "\n";
  readonly tail = "";
  /** The prefix is well-formed (validated), so it never pairs with the text after it. */
  private readonly prefixChars: number;
  constructor(
    private readonly heading: string,
    private readonly prefix: string,
    private readonly recallLine: ((item: SourceItem) => string) | null,
  ) {
    this.prefixChars = cpLength(prefix);
  }
  head(): string {
    return `${this.heading}\n`;
  }
  line(item: SourceItem): string {
    return this.prefix + (this.recallLine === null ? item.text : this.recallLine(item));
  }
  lineChars(item: SourceItem): number {
    if (this.recallLine !== null) return cpLength(this.line(item));
    return this.prefixChars + cpLength(item.text);
  }
}
