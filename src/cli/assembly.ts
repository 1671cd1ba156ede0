/**
 * What `assemble` and `demo` share (not a verb): running the main job in its recorded
 * form, the demo's fixed request over the bundled example workspace, and the two views of
 * an assembly (tables for people, JSON for machines).
 */
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { toErrorObject } from "../errors/index.js";
import type { RendererName } from "../render/index.js";
import type { TokenizerName } from "../tokens/index.js";
// The modules themselves, not the stage's index: the chat loop it also exports is not needed.
import type { AssembleRecordRequest, Recorder, WorkspaceAssembly } from "../workspace/index.js";
import { runAssembleRequest } from "../workspace/record/assemble-runner.js";
import type { TableStyle } from "./table.js";
import { assemblyReport } from "./tables.js";

/** The people's view: layers, both decision tables, notes, then the prompt, fitted to the style's width. */
export function formatAssembly(out: WorkspaceAssembly, style: TableStyle): string {
  const skills = out.workspace.skills.selection;
  const notes = [
    skills.abstained
      ? "skills: abstained (no trigger matched)"
      : `skills: ${skills.matched.map((m) => `${m.name} (${m.reasons.join(", ")})`).join("; ")}`,
    ...out.workspace.instructions.issues.map(
      (i) => `instructions: ${i.kind} ${i.path}: ${i.detail}`,
    ),
    ...out.workspace.skills.catalog.invalid.map((i) => `skills: invalid ${i.path}: ${i.reason}`),
    ...out.workspace.kbIssues.map((i) => `kb: ${i.file}:${i.line}: ${i.reason}`),
  ];
  return assemblyReport(out, notes, style);
}

/** The machines' view: exactly `{prompt, manifest, memoryPlan, segmentPlan}`. */
export function assemblyJson(out: WorkspaceAssembly): string {
  return JSON.stringify({
    prompt: out.prompt,
    manifest: out.manifest,
    memoryPlan: out.memoryPlan,
    segmentPlan: out.segmentPlan,
  });
}

/**
 * Runs a recorded-form request and appends it, with its assembly or its error object, to
 * the recording when there is one.
 */
export async function runRecorded(
  request: AssembleRecordRequest,
  recorder: Recorder | null,
): Promise<WorkspaceAssembly> {
  try {
    const out = await runAssembleRequest(request, process.cwd(), false, process.env);
    recorder?.recordLine("assemble", request, out);
    return out;
  } catch (err) {
    recorder?.recordLine("assemble", request, toErrorObject(err));
    throw err;
  }
}

/** The bundled example workspace (shipped with the package). */
export function exampleWorkspace(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), "../../examples/workspace");
}

/** The demo's fixed inputs: same bytes on every machine. */
export const DEMO_QUERY = "add an index on invoices.created_at in a new migration";
export const DEMO_NOW = "2026-11-30T09:00:00Z";

/** Options of the workspace demo. */
export interface WorkspaceDemoOptions {
  budgetChars?: number;
  budgetTokens?: number;
  tokenizer?: TokenizerName;
  renderer?: RendererName;
}

/**
 * The demo's request: the example workspace, the fixed query and clock, and a store
 * seeded from the workspace's `memories.jsonl` (the line carries the memories, so a
 * replay rebuilds the same store).
 */
export function demoRequest(options: WorkspaceDemoOptions): AssembleRecordRequest {
  const root = exampleWorkspace();
  return {
    workspace: root,
    query: DEMO_QUERY,
    now: DEMO_NOW,
    store: { seed: { jsonl: readFileSync(join(root, "memories.jsonl"), "utf8"), now: DEMO_NOW } },
    ...(options.budgetChars !== undefined ? { budgetChars: options.budgetChars } : {}),
    ...(options.budgetTokens !== undefined ? { budgetTokens: options.budgetTokens } : {}),
    ...(options.tokenizer !== undefined ? { tokenizer: options.tokenizer } : {}),
    ...(options.renderer !== undefined ? { renderer: options.renderer } : {}),
  };
}

/**
 * Runs the main job on the example workspace with a fresh store imported from its
 * `memories.jsonl` into a temporary directory (removed afterwards); `recorder` gets the
 * line.
 *
 * @example const out = await runWorkspaceDemo({ budgetChars: 6000 });
 */
export function runWorkspaceDemo(
  options: WorkspaceDemoOptions,
  recorder: Recorder | null = null,
): Promise<WorkspaceAssembly> {
  return runRecorded(demoRequest(options), recorder);
}
