/**
 * The data behind `promptctx demo` and `promptctx repl`, kept out of the code in
 * examples/demo/ at the package root (shipped with the package): demo.json (the recall
 * candidates, the prompt's texts, the experts, skills and connectors a session can use) and
 * repl.json (the repl session's clock, query, policy, profiles, task, observations and
 * tools). Fixed data, fixed timestamps: the demo prints the same bytes on every machine.
 * Read once per process, validated by the stages' own schemas.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { invalidFromZod } from "../../errors/index.js";
import { CandidateSchema } from "../../memory/index.js";
import {
  ConstraintRuleSchema,
  ObservationInputSchema,
  ProfileEntrySchema,
  TaskStateSchema,
  ToolCallSchema,
  ToolSpecSchema,
} from "../../sources/index.js";
import { isoTimestamp } from "../../text/index.js";

/** examples/demo/ of the package: ../../ from src/cli and from dist/cli alike. */
export const DEMO_DATA_DIR = fileURLToPath(new URL("../../../examples/demo/", import.meta.url));

const text = z.string();
const byName = z.record(z.string(), text);

const DemoDataSchema = z.object({
  /** The user the demo selects memory for. */
  user: z.string(),
  /** Six recall hits: three competing for one slot, an independent preference, a weak hit, another user's hit. */
  candidates: z.array(CandidateSchema),
  text: z.object({
    baseRules: text,
    identity: text,
    projectContext: text,
    tools: text,
    regionalConventions: text,
  }),
  /** Experts by name → the expert segment's text. */
  experts: byName,
  /** Skills by name: a one-line summary (the skills list) and the body a loaded skill adds. */
  skills: z.record(z.string(), z.object({ summary: text, body: text })),
  /** Connectors by name → what they allow. */
  connectors: byName,
  /** Working-mode segment text per working mode. */
  workingModes: z.object({ craft: text, plan: text, ask: text }),
});

/** The data of `promptctx demo` (examples/demo/demo.json). */
export type DemoData = z.infer<typeof DemoDataSchema>;

const ReplDataSchema = z.object({
  /** The repl's clock starts here and advances one minute per reassembly. */
  start: isoTimestamp,
  /** The query every repl assembly answers until `query TEXT` replaces it. */
  query: text,
  /** The sandbox policy behind the constraints slot. */
  policy: z.object({ rules: z.array(ConstraintRuleSchema) }),
  /** Profiles by user scope; a scope without one gets an empty profile slot. */
  profiles: z.record(z.string(), z.array(ProfileEntrySchema)),
  /** Importance shown on recall lines for the demo candidates. */
  importance: z.record(z.string(), z.number()),
  /** The planner's task state (used by the `react` schema). */
  task: TaskStateSchema,
  /** The task observations buffered at the start. */
  observations: z.array(ObservationInputSchema),
  /** The registered tools, and the calls recorded before the session starts. */
  tools: z.array(ToolSpecSchema),
  toolCalls: z.array(ToolCallSchema),
});

/** The data of `promptctx repl` (examples/demo/repl.json). */
export type ReplData = z.infer<typeof ReplDataSchema>;

function load<T>(file: string, schema: z.ZodType<T>): T {
  const value: unknown = JSON.parse(readFileSync(`${DEMO_DATA_DIR}${file}`, "utf8"));
  const r = schema.safeParse(value);
  if (!r.success) throw invalidFromZod(r.error, [file]);
  return r.data;
}

let demo: DemoData | undefined;
let repl: ReplData | undefined;

/**
 * The demo's data, read and validated on first use.
 *
 * @example demoData().candidates.length // 6
 */
export function demoData(): DemoData {
  demo ??= load("demo.json", DemoDataSchema);
  return demo;
}

/**
 * The repl's data, read and validated on first use.
 *
 * @example replData().start // "2026-11-30T09:00:00Z"
 */
export function replData(): ReplData {
  repl ??= load("repl.json", ReplDataSchema);
  return repl;
}
