/**
 * The verbs as `promptctx --help` lists them: every verb's name and one-line summary (also
 * the verb's own description: {@link summaryOf}). Nothing here imports a verb, so each
 * verb's module may import this file; registry.ts, the one table that imports the verbs'
 * modules, says how to load each.
 */
import type { Command } from "commander";

/** Receives a verb's exit code. */
export type SetExit = (code: number) => void;

/** Registers a verb (and its subcommands) on the program. */
export type RegisterVerb = (program: Command, setExit: SetExit) => void;

/** One verb as `--help` lists it. */
export interface Verb {
  name: string;
  summary: string;
  /** Whether the verb has options of its own (`--help` lists it as `NAME [options]`). */
  options: boolean;
  /** Its positional argument, as the verb declares it (`<file>`, `[file]`), if any. */
  argument?: string;
}

/** The verbs, in the order `--help` lists them. */
export const VERBS = [
  {
    name: "select-memory",
    summary: "select recalled memories for a prompt: JSON request in, plan out",
    options: true,
  },
  {
    name: "plan-prompt",
    summary: "plan a system prompt under a budget: JSON request in, plan out",
    options: true,
  },
  {
    name: "plan-conversation",
    summary: "plan a conversation's messages under a token budget: JSON request in, plan out",
    options: true,
  },
  {
    name: "request",
    summary:
      "the whole agent request (as POST /v1/request): provider, model, messages, system {segments} in; {body, plan, budget, manifest} out",
    options: true,
  },
  {
    name: "assemble-context",
    summary:
      "assemble from inline slot data: mode, renderer, layout, budgets, query and slots in; {prompt, manifest, memoryPlan, segmentPlan} out",
    options: true,
  },
  {
    name: "demo",
    summary:
      "run the main job on the bundled example workspace with a temporary memory store (no API key, no network)",
    options: true,
  },
  {
    name: "assemble",
    summary:
      "assemble the prompt for a query over a workspace (instructions, skills, KB, memory store, config)",
    options: true,
  },
  {
    name: "memory",
    summary:
      "the memory store (SQLite file, or PostgreSQL with --store postgres://…): add, import, export, recall (by words and by meaning), reembed, list, show, history, forget, approve",
    options: false,
  },
  {
    name: "store",
    summary:
      "set up a shared PostgreSQL memory store: `store init URL` creates its owner and app roles and migrates it",
    options: false,
  },
  {
    name: "serve",
    summary:
      "run the HTTP service: POST /v1/select-memory, /v1/plan-prompt, /v1/plan-conversation, /v1/assemble, /v1/assemble-context, /v1/memories, /v1/recall, /v1/request, /mcp (MCP); GET /healthz, /openapi.json",
    options: true,
  },
  {
    name: "mcp",
    summary:
      "an MCP server over stdio for one user: tools recall, remember, forget, assemble_context; resources memory://, instructions:///, manifest://last; prompt system",
    options: true,
  },
  {
    name: "replay",
    summary:
      "rerun every line of a recording (--record) and report what changed: decisions, prompt bytes, cache keys",
    options: true,
    argument: "<file>",
  },
  {
    name: "inspect",
    summary:
      "a local page showing a recording turn by turn (or one assembly of a workspace): layers, tokens, decisions, diffs, cost",
    options: true,
    argument: "[file]",
  },
  {
    name: "check-draft",
    summary: "check a draft reply against red lines: exit 4 when a block-severity line is crossed",
    options: true,
  },
  {
    name: "chat",
    summary:
      "a multi-turn agent loop over a workspace: user lines from stdin, the context reassembled each turn, tools run, drafts checked against red lines",
    options: true,
  },
  {
    name: "repl",
    summary:
      "an interactive runtime session: fire events, see what was reassembled (commands from stdin; type help)",
    options: true,
  },
] as const satisfies readonly Verb[];

/** The name of a verb of {@link VERBS}. */
export type VerbName = (typeof VERBS)[number]["name"];

/**
 * A verb's description: the one line `--help` lists is the verb's own, written once here.
 *
 * @example summaryOf("demo").startsWith("run the main job") // true
 */
export function summaryOf(name: string): string {
  const verb = VERBS.find((v) => v.name === name);
  if (verb === undefined) throw new Error(`no verb "${name}" in the registry`);
  return verb.summary;
}
