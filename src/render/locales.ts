/**
 * The locale tables of the heading renderers (docs/assembler.md, docs/inline-assembly.md): one table per locale,
 * pure data — headings, the heading and item formats, the recall line, and how each
 * structured item (constraint, task, next step, tool, call, profile) reads. `zh-CN`
 * reproduces the reference Go design's lines byte for byte; `en` keeps the plain
 * formats the sources also put in `text`.
 */
import { z } from "zod";
import { deepFreeze, textString } from "../text/index.js";

/** How recall lines (kind `recall_memory`) show importance and combined score. */
export interface RecallLineFormat {
  /** Line template with `{text}` and `{details}` (the present details joined by `separator`). */
  readonly line: string;
  /** Detail template for importance, `{value}` is the formatted number. */
  readonly importance: string;
  /** Detail template for the combined score, `{value}` is the formatted number. */
  readonly score: string;
  readonly separator: string;
  /** Decimals of both values (half to even on the exact binary value, docs/text-and-tokens.md). */
  readonly digits: number;
  /** Importance shown when an item has none (absent: the detail is left out). */
  readonly defaultImportance?: number;
}

/**
 * How structured items (`SourceItem.data`) read. Templates use `{name}` placeholders,
 * filled in one pass; an item without `data`, or a table without `items`, reads as its
 * `text`.
 */
export interface ItemFormats {
  /** `{label}` (the level's entry in `labels`, else the level as given), `{level}`, `{text}`. */
  readonly constraint: { readonly line: string; readonly labels: Readonly<Record<string, string>> };
  /** One line per template: `{taskId}`, `{status}`, `{phase}`, `{done}`, `{total}`. */
  readonly task: { readonly lines: readonly string[] };
  /** `both` when step and tool are known, else `step` or `tool`: `{nextStep}`, `{nextTool}`. */
  readonly next: { readonly both: string; readonly step: string; readonly tool: string };
  /**
   * `line`, or `bare` when the description is blank: `{name}`, `{description}`, `{args}`
   * (the required args joined by `argsSeparator`) and `{required}` (`required` filled with
   * `{args}` when there are required args, else empty).
   */
  readonly tool: {
    readonly line: string;
    readonly bare: string;
    readonly required: string;
    readonly argsSeparator: string;
  };
  /** `line`, or `bare` when the summary is blank: `{tool}`, `{outcome}` (`ok`/`failed`), `{summary}`. */
  readonly call: {
    readonly line: string;
    readonly bare: string;
    readonly ok: string;
    readonly failed: string;
  };
  /** `{key}`, `{value}`. */
  readonly profile: { readonly line: string };
}

/** A locale as data. */
export interface LocaleTable {
  /** Heading text per slot kind; other kinds use the slot title, then the kind itself. */
  readonly headings: Readonly<Record<string, string>>;
  /** Heading line template with `{title}`. */
  readonly headingFormat: string;
  /** Prefix of every item line. */
  readonly itemPrefix: string;
  readonly recall: RecallLineFormat;
  readonly items?: ItemFormats;
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
    defaultImportance: z.number().min(0).max(1).optional(),
  }),
  items: z
    .object({
      constraint: z.object({ line: textString, labels: z.record(textString, textString) }),
      task: z.object({ lines: z.array(textString).min(1) }),
      next: z.object({ both: textString, step: textString, tool: textString }),
      tool: z.object({
        line: textString,
        bare: textString,
        required: textString,
        argsSeparator: textString,
      }),
      call: z.object({ line: textString, bare: textString, ok: textString, failed: textString }),
      profile: z.object({ line: textString }),
    })
    .optional(),
});

const EN: LocaleTable = {
  headings: {
    constraints: "Constraints",
    planner: "Task plan",
    task_memory: "Task observations",
    tool_state: "Tools",
    profile: "User profile",
    recall_memory: "Related memories",
  },
  headingFormat: "## {title}",
  itemPrefix: "- ",
  recall: {
    line: "{text} ({details})",
    importance: "importance={value}",
    score: "score={value}",
    separator: ", ",
    digits: 2,
  },
  items: {
    constraint: { line: "[{label}] {text}", labels: {} },
    task: { lines: ["task {taskId} · {status} · phase {phase} · progress {done}/{total}"] },
    next: {
      both: "next: {nextStep} (tool {nextTool})",
      step: "next: {nextStep}",
      tool: "next tool: {nextTool}",
    },
    tool: {
      line: "{name}({args}) — {description}",
      bare: "{name}({args})",
      required: "",
      argsSeparator: ", ",
    },
    call: {
      line: "{tool} → {outcome}: {summary}",
      bare: "{tool} → {outcome}",
      ok: "ok",
      failed: "failed",
    },
    profile: { line: "{key}: {value}" },
  },
};

const ZH_CN: LocaleTable = {
  headings: {
    constraints: "硬性约束",
    planner: "任务规划",
    task_memory: "任务观察",
    tool_state: "可用工具",
    profile: "用户画像",
    recall_memory: "相关回忆",
  },
  headingFormat: "【{title}】",
  itemPrefix: "- ",
  recall: {
    line: "{text}（{details}）",
    importance: "重要性={value}",
    score: "综合分={value}",
    separator: ", ",
    digits: 2,
    defaultImportance: 0.5,
  },
  items: {
    constraint: {
      line: "[{label}] {text}",
      labels: { forbid: "禁止", warn: "告警", require: "必须" },
    },
    task: { lines: ["任务 {taskId} 状态={status} 阶段={phase}", "进度：第 {done}/{total} 步"] },
    next: {
      both: "下一步：调用 {nextStep}（工具={nextTool}）",
      step: "下一步：{nextStep}",
      tool: "下一步工具：{nextTool}",
    },
    tool: {
      line: "{name} — {description}{required}",
      bare: "{name}{required}",
      required: "（必填 {args}）",
      argsSeparator: ", ",
    },
    call: {
      line: "近期调用 {tool} [{outcome}]: {summary}",
      bare: "近期调用 {tool} [{outcome}]",
      ok: "成功",
      failed: "失败",
    },
    profile: { line: "{key}: {value}" },
  },
};

/** The built-in locales (frozen). */
export const LOCALES: Readonly<Record<"en" | "zh-CN", LocaleTable>> = deepFreeze({
  en: EN,
  "zh-CN": ZH_CN,
});
