/**
 * The command registry: every verb's name and one-line summary (what `promptctx --help`
 * lists, and the verb's own description: {@link summaryOf}) and how to load its module.
 * Nothing here imports a verb: `main` loads the one verb a command line names, so each
 * verb loads only what it uses, and `--help` loads none.
 */
import type { Command } from "commander";

/** Receives a verb's exit code. */
export type SetExit = (code: number) => void;

/** Registers a verb (and its subcommands) on the program. */
export type RegisterVerb = (program: Command, setExit: SetExit) => void;

/** One verb of the registry. */
export interface Verb {
  name: string;
  summary: string;
  /** Whether the verb has options of its own (`--help` lists it as `NAME [options]`). */
  options: boolean;
  /** Its positional argument, as the verb declares it (`<file>`, `[file]`), if any. */
  argument?: string;
  load(): Promise<RegisterVerb>;
}

const jsonVerb =
  (name: "select-memory" | "plan-prompt" | "plan-conversation" | "assemble-context") =>
  async (): Promise<RegisterVerb> => {
    const m = await import("./json-verbs.js");
    return (program, setExit) => m.registerJsonVerb(program, setExit, name);
  };

/** The verbs, in the order `--help` lists them. */
export const VERBS: readonly Verb[] = [
  {
    name: "select-memory",
    summary: "select recalled memories for a prompt: JSON request in, plan out",
    options: true,
    load: jsonVerb("select-memory"),
  },
  {
    name: "plan-prompt",
    summary: "plan a system prompt under a budget: JSON request in, plan out",
    options: true,
    load: jsonVerb("plan-prompt"),
  },
  {
    name: "plan-conversation",
    summary: "plan a conversation's messages under a token budget: JSON request in, plan out",
    options: true,
    load: jsonVerb("plan-conversation"),
  },
  {
    name: "assemble-context",
    summary:
      "assemble from inline slot data: mode, renderer, layout, budgets, query and slots in; {prompt, manifest, memoryPlan, segmentPlan} out",
    options: true,
    load: jsonVerb("assemble-context"),
  },
  {
    name: "demo",
    summary:
      "run the main job on the bundled example workspace with a temporary memory store (no API key, no network)",
    options: true,
    load: async () => (await import("./demo-cmd.js")).registerDemoCommand,
  },
  {
    name: "assemble",
    summary:
      "assemble the prompt for a query over a workspace (instructions, skills, KB, memory store, config)",
    options: true,
    load: async () => (await import("./assemble-cmd.js")).registerAssembleCommand,
  },
  {
    name: "memory",
    summary:
      "the memory store (SQLite file, or PostgreSQL with --store postgres://…): add, import, export, recall",
    options: false,
    load: async () => (await import("./memory-cmd.js")).registerMemoryCommands,
  },
  {
    name: "store",
    summary:
      "set up a shared PostgreSQL memory store: `store init URL` creates its owner and app roles and migrates it",
    options: false,
    load: async () => (await import("./store-cmd.js")).registerStoreCommands,
  },
  {
    name: "serve",
    summary:
      "run the HTTP service: POST /v1/select-memory, /v1/plan-prompt, /v1/plan-conversation, /v1/assemble, /v1/assemble-context, /v1/memories, /v1/recall; GET /healthz, /openapi.json",
    options: true,
    load: async () => (await import("./serve-cmd.js")).registerServeCommand,
  },
  {
    name: "replay",
    summary:
      "rerun every line of a recording (--record) and report what changed: decisions, prompt bytes, cache keys",
    options: true,
    argument: "<file>",
    load: async () => (await import("./replay-cmd.js")).registerReplayCommand,
  },
  {
    name: "inspect",
    summary:
      "a local page showing a recording turn by turn (or one assembly of a workspace): layers, tokens, decisions, diffs, cost",
    options: true,
    argument: "[file]",
    load: async () => (await import("./inspect-cmd.js")).registerInspectCommand,
  },
  {
    name: "check-draft",
    summary: "check a draft reply against red lines: exit 4 when a block-severity line is crossed",
    options: true,
    load: async () => (await import("./check-draft-cmd.js")).registerCheckDraftCommand,
  },
  {
    name: "chat",
    summary:
      "a multi-turn agent loop over a workspace: user lines from stdin, the context reassembled each turn, tools run, drafts checked against red lines",
    options: true,
    load: async () => (await import("./chat/command.js")).registerChatCommand,
  },
  {
    name: "repl",
    summary:
      "an interactive runtime session: fire events, see what was reassembled (commands from stdin; type help)",
    options: true,
    load: async () => (await import("./repl-cmd.js")).registerReplCommand,
  },
];

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
