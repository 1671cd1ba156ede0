/**
 * Heading renderers (docs/assembler.md, docs/inline-assembly.md): one function driven by a
 * locale table. A locale is data — headings per kind, a heading format, a recall-line
 * format, a list-item prefix and the formats of structured items — so callers add a
 * language without writing a renderer.
 */
import { InvalidInputError, invalidFromZod } from "../errors/index.js";
import type { ItemData, SourceItem } from "../sources/index.js";
import { cpLength, formatFixed, isBlank } from "../text/index.js";
import { type ItemFormats, type LocaleTable, LocaleTableSchema } from "./locales.js";
import { renderFramed, type SlotFrame, type SlotRenderer } from "./types.js";

export {
  type ItemFormats,
  LOCALES,
  type LocaleTable,
  LocaleTableSchema,
  type RecallLineFormat,
} from "./locales.js";

/**
 * A locale's templates split once at their `{key}` placeholders (literal, key, literal, …,
 * literal), so filling one is a concatenation: a slot of a thousand items fills thousands
 * of templates per assembly. Substituted values are never scanned again, `$` patterns in
 * them mean nothing, and a placeholder without a value stays as written.
 */
class Templates {
  readonly #compiled = new Map<string, { parts: readonly string[]; literalChars: number }>();

  #compile(template: string): { parts: readonly string[]; literalChars: number } {
    let c = this.#compiled.get(template);
    if (c === undefined) {
      const parts = template.split(/\{(\w+)\}/);
      let literalChars = 0;
      for (let i = 0; i < parts.length; i += 2) literalChars += cpLength(parts[i] as string);
      c = { parts, literalChars };
      this.#compiled.set(template, c);
    }
    return c;
  }

  fill({ template, vars }: Fill): string {
    const parts = this.#compile(template).parts;
    let out = parts[0] as string;
    for (let i = 1; i < parts.length; i += 2) {
      const key = parts[i] as string;
      out += Object.hasOwn(vars, key) ? (vars[key] as string) : `{${key}}`;
      out += parts[i + 1] as string;
    }
    return out;
  }

  /**
   * Code points of `fill(f)` without building it: the pieces are well-formed text (locale
   * tables and items are validated), so no surrogate pair spans two and their code points
   * add up.
   */
  fillChars({ template, vars }: Fill): number {
    const { parts, literalChars } = this.#compile(template);
    let n = literalChars;
    for (let i = 1; i < parts.length; i += 2) {
      const key = parts[i] as string;
      // An unfilled placeholder stays as `{key}`; keys are ASCII word characters.
      n += Object.hasOwn(vars, key) ? cpLength(vars[key] as string) : key.length + 2;
    }
    return n;
  }
}

/** A template with the values to fill it with: one line of an item, not yet built. */
interface Fill {
  template: string;
  vars: Readonly<Record<string, string>>;
}

/**
 * The lines of a structured item under a locale's item formats (one line for most, one
 * per template for a task), as fills. Pure data-driven: no per-locale code.
 */
function dataFills(data: ItemData, f: ItemFormats, t: Templates): Fill[] {
  switch (data.type) {
    case "constraint": {
      const label = Object.hasOwn(f.constraint.labels, data.level)
        ? (f.constraint.labels[data.level] as string)
        : data.level;
      return [{ template: f.constraint.line, vars: { label, level: data.level, text: data.text } }];
    }
    case "task": {
      const vars = { ...data, done: String(data.done), total: String(data.total) };
      return f.task.lines.map((template) => ({ template, vars }));
    }
    case "next": {
      const vars = { nextStep: data.nextStep ?? "", nextTool: data.nextTool ?? "" };
      const which =
        data.nextStep !== undefined && data.nextTool !== undefined
          ? f.next.both
          : data.nextStep !== undefined
            ? f.next.step
            : f.next.tool;
      return [{ template: which, vars }];
    }
    case "tool": {
      const args = data.requiredArgs.join(f.tool.argsSeparator);
      // The required part is a template of its own, filled first and substituted whole.
      const required =
        data.requiredArgs.length > 0 ? t.fill({ template: f.tool.required, vars: { args } }) : "";
      const vars = { name: data.name, description: data.description, args, required };
      return [{ template: isBlank(data.description) ? f.tool.bare : f.tool.line, vars }];
    }
    case "call": {
      const vars = {
        tool: data.tool,
        outcome: data.ok ? f.call.ok : f.call.failed,
        summary: data.summary,
      };
      return [{ template: isBlank(data.summary) ? f.call.bare : f.call.line, vars }];
    }
    case "profile":
      return [{ template: f.profile.line, vars: { key: data.key, value: data.value } }];
  }
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
  const table: LocaleTable = parsed.data as LocaleTable;
  const templates = new Templates();
  const headingText = (slot: { kind: string; title?: string }): string => {
    if (slot.title !== undefined) return slot.title;
    return Object.hasOwn(table.headings, slot.kind)
      ? (table.headings[slot.kind] as string)
      : slot.kind;
  };
  // A recall line appends its figures; no figures: the item's text alone.
  const recallFills = (item: SourceItem): Fill[] | null => {
    const r = table.recall;
    const details: string[] = [];
    const importance = item.importance ?? r.defaultImportance;
    if (importance !== undefined) {
      const value = formatFixed(importance, r.digits);
      details.push(templates.fill({ template: r.importance, vars: { value } }));
    }
    if (item.score !== undefined) {
      const value = formatFixed(item.score, r.digits);
      details.push(templates.fill({ template: r.score, vars: { value } }));
    }
    if (details.length === 0) return null;
    return [{ template: r.line, vars: { text: item.text, details: details.join(r.separator) } }];
  };
  const formats = table.items;
  const dataLines =
    formats === undefined
      ? null
      : (item: SourceItem) =>
          item.data === undefined ? null : dataFills(item.data, formats, templates);
  // Recall lines show their figures; structured items read as the table's formats.
  const recallLines = new ListLines(table.itemPrefix, recallFills, templates, false);
  // With item formats, a structured item's line is made of its data alone.
  const dataListLines = new ListLines(table.itemPrefix, dataLines, templates, dataLines !== null);
  const linesOf = (kind: string): ListLines =>
    kind === "recall_memory" ? recallLines : dataListLines;
  const frame = (slot: { kind: string; title?: string; itemStyle?: "list" | "block" }) => {
    const heading = templates.fill({
      template: table.headingFormat,
      vars: { title: headingText(slot) },
    });
    // Documents (instruction files, skill bodies) read as blocks, not as list items.
    if (slot.itemStyle === "block") return new BlockFrame(heading);
    return new ListFrame(heading, linesOf(slot.kind));
  };
  return {
    name,
    renderSlot: (slot, items) => (items.length === 0 ? "" : renderFramed(frame(slot), items)),
    frame,
    // What one item renders to: its line in the slot's frame (no heading needed for that).
    renderItem: (slot, item) =>
      slot.itemStyle === "block" ? item.text : linesOf(slot.kind).line(item),
    itemChars: (slot, item) =>
      slot.itemStyle === "block" ? cpLength(item.text) : linesOf(slot.kind).chars(item),
  };
}

/** An item's own line(s) under a locale, as fills (null: the item's text). */
type ItemFormat = (item: SourceItem) => Fill[] | null;

/** An item as list line(s): each of its own lines (or its text) after the prefix. */
function listLine(
  prefix: string,
  format: ItemFormat | null,
  item: SourceItem,
  templates: Templates,
): string {
  const own = format === null ? null : format(item);
  if (own === null) return prefix + item.text;
  let out = prefix + templates.fill(own[0] as Fill);
  for (let i = 1; i < own.length; i++) out += `\n${prefix}${templates.fill(own[i] as Fill)}`;
  return out;
}

/** Code points of {@link listLine}, without building it (see `Templates.fillChars`). */
function listLineChars(
  prefixChars: number,
  format: ItemFormat | null,
  item: SourceItem,
  templates: Templates,
): number {
  const own = format === null ? null : format(item);
  if (own === null) return prefixChars + cpLength(item.text);
  let n = own.length - 1; // the newlines between lines
  for (const fill of own) n += prefixChars + templates.fillChars(fill);
  return n;
}

/**
 * Items as list lines under one format: each line, and its code points — remembered per
 * item when the item is frozen (the assembler's items are: a kept source's, a validated
 * caller's; a frozen item's line cannot change), so a slot priced again over the same
 * items (every assembly over long-lived sources) measures each line once. When the line
 * of a structured item is made of its data alone (`dataOnly`), the size is remembered per
 * frozen data instead: a tool call's data outlives its item, which is new on every fetch
 * (its rank moves with each later call).
 */
class ListLines {
  /** An instance kept for the life of the class: see "Object shapes" in docs/performance.md. */
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: held only to keep the shape alive
  static readonly #shape = new ListLines("", null, new Templates(), false);
  /** Line sizes by frozen item, or by frozen data for lines made of data alone. */
  readonly #known = new WeakMap<object, number>();
  /** The prefix is well-formed (validated), so it never pairs with the text after it. */
  readonly #prefixChars: number;

  constructor(
    private readonly prefix: string,
    private readonly format: ItemFormat | null,
    private readonly templates: Templates,
    private readonly dataOnly: boolean,
  ) {
    this.#prefixChars = cpLength(prefix);
  }

  line(item: SourceItem): string {
    return listLine(this.prefix, this.format, item, this.templates);
  }

  chars(item: SourceItem): number {
    const key = this.#memoKey(item);
    if (key === null) return this.#measure(item);
    let n = this.#known.get(key);
    if (n === undefined) {
      n = this.#measure(item);
      this.#known.set(key, n);
    }
    return n;
  }

  /** What `item`'s line size is remembered under: its frozen data, itself, or nothing. */
  #memoKey(item: SourceItem): object | null {
    const data = item.data;
    if (this.dataOnly && data !== undefined && dataFrozen(data)) return data;
    return Object.isFrozen(item) && (data === undefined || dataFrozen(data)) ? item : null;
  }

  #measure(item: SourceItem): number {
    return listLineChars(this.#prefixChars, this.format, item, this.templates);
  }
}

/** Whether `data` and every value inside it a line reads is frozen. */
function dataFrozen(data: ItemData): boolean {
  return Object.isFrozen(data) && (data.type !== "tool" || Object.isFrozen(data.requiredArgs));
}

// Frames are class instances, not literals of closures: optimized code that calls them
// then depends on long-lived classes, not on per-slot closures that die after each
// assembly (V8 discards code tied to dead objects, "weak objects", after a full GC).

/** Documents as paragraphs: `heading\n\ntext\n\ntext`. */
class BlockFrame implements SlotFrame {
  /** An instance kept for the life of the class: see "Object shapes" in docs/performance.md. */
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: held only to keep the shape alive
  static readonly #shape = new BlockFrame("");
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

/**
 * One prefixed line per item: `heading\n- text\n- text`, the lines as the slot kind's
 * {@link ListLines} give them (recall figures, structured items, or the item's text).
 */
class ListFrame implements SlotFrame {
  /** An instance kept for the life of the class: see "Object shapes" in docs/performance.md. */
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: held only to keep the shape alive
  static readonly #shape = new ListFrame("", new ListLines("", null, new Templates(), false));
  readonly separator = "\n";
  readonly tail = "";
  constructor(
    private readonly heading: string,
    private readonly lines: ListLines,
  ) {}
  head(): string {
    return `${this.heading}\n`;
  }
  line(item: SourceItem): string {
    return this.lines.line(item);
  }
  lineChars(item: SourceItem): number {
    return this.lines.chars(item);
  }
}
