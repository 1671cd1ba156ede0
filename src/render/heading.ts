/**
 * Heading renderers (spec 04, 10): one function driven by a locale table. A locale is data
 * — headings per kind, a heading format, a recall-line format, a list-item prefix and the
 * formats of structured items — so callers add a language without writing a renderer.
 */
import { InvalidInputError, invalidFromZod } from "../errors/index.js";
import type { ItemData, SourceItem } from "../sources/index.js";
import { formatFixed, isBlank } from "../text/index.js";
import { type ItemFormats, type LocaleTable, LocaleTableSchema } from "./locales.js";
import type { SlotRenderer } from "./types.js";

export {
  type ItemFormats,
  LOCALES,
  type LocaleTable,
  LocaleTableSchema,
  type RecallLineFormat,
} from "./locales.js";

// One pass over the template: substituted values are never scanned again, and `$`
// patterns in them mean nothing.
function fill(template: string, vars: Readonly<Record<string, string>>): string {
  return template.replace(/\{(\w+)\}/g, (m, key: string) =>
    Object.hasOwn(vars, key) ? (vars[key] as string) : m,
  );
}

/**
 * The lines of a structured item under a locale's item formats (one line for most, one
 * per template for a task). Pure data-driven: no per-locale code.
 */
function formatData(data: ItemData, f: ItemFormats): string[] {
  switch (data.type) {
    case "constraint": {
      const label = Object.hasOwn(f.constraint.labels, data.level)
        ? (f.constraint.labels[data.level] as string)
        : data.level;
      return [fill(f.constraint.line, { label, level: data.level, text: data.text })];
    }
    case "task": {
      const vars = { ...data, done: String(data.done), total: String(data.total) };
      return f.task.lines.map((line) => fill(line, vars));
    }
    case "next": {
      const vars = { nextStep: data.nextStep ?? "", nextTool: data.nextTool ?? "" };
      const which =
        data.nextStep !== undefined && data.nextTool !== undefined
          ? f.next.both
          : data.nextStep !== undefined
            ? f.next.step
            : f.next.tool;
      return [fill(which, vars)];
    }
    case "tool": {
      const args = data.requiredArgs.join(f.tool.argsSeparator);
      const required = data.requiredArgs.length > 0 ? fill(f.tool.required, { args }) : "";
      const vars = { name: data.name, description: data.description, args, required };
      return [fill(isBlank(data.description) ? f.tool.bare : f.tool.line, vars)];
    }
    case "call": {
      const vars = {
        tool: data.tool,
        outcome: data.ok ? f.call.ok : f.call.failed,
        summary: data.summary,
      };
      return [fill(isBlank(data.summary) ? f.call.bare : f.call.line, vars)];
    }
    case "profile":
      return [fill(f.profile.line, { key: data.key, value: data.value })];
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
  const headingText = (slot: { kind: string; title?: string }): string => {
    if (slot.title !== undefined) return slot.title;
    return Object.hasOwn(table.headings, slot.kind)
      ? (table.headings[slot.kind] as string)
      : slot.kind;
  };
  const recallLine = (item: SourceItem): string => {
    const r = table.recall;
    const details: string[] = [];
    const importance = item.importance ?? r.defaultImportance;
    if (importance !== undefined) {
      details.push(fill(r.importance, { value: formatFixed(importance, r.digits) }));
    }
    if (item.score !== undefined) {
      details.push(fill(r.score, { value: formatFixed(item.score, r.digits) }));
    }
    if (details.length === 0) return item.text;
    return fill(r.line, { text: item.text, details: details.join(r.separator) });
  };
  const lines = (slot: { kind: string }, item: SourceItem): string[] => {
    if (slot.kind === "recall_memory") return [recallLine(item)];
    if (item.data !== undefined && table.items !== undefined)
      return formatData(item.data, table.items);
    return [item.text];
  };
  const itemText = (slot: { kind: string; itemStyle?: "list" | "block" }, item: SourceItem) => {
    // Documents (instruction files, skill bodies) read as blocks, not as list items.
    if (slot.itemStyle === "block") return item.text;
    return lines(slot, item)
      .map((line) => table.itemPrefix + line)
      .join("\n");
  };
  return {
    name,
    renderSlot(slot, items) {
      if (items.length === 0) return "";
      const heading = fill(table.headingFormat, { title: headingText(slot) });
      const parts = [heading, ...items.map((item) => itemText(slot, item))];
      return parts.join(slot.itemStyle === "block" ? "\n\n" : "\n");
    },
    renderItem: itemText,
  };
}
