/**
 * The command registry: every verb's name and one-line summary (what `promptctx --help`
 * lists) and how to load its module. Nothing here imports a verb: `main` loads the one
 * verb a command line names, so each verb loads only what it uses, and `--help` loads
 * none. Summaries are the verbs' own descriptions (a test keeps the two equal).
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
  load(): Promise<RegisterVerb>;
}

/** The verbs, in the order `--help` lists them. */
export const VERBS: readonly Verb[] = [
  {
    name: "select-memory",
    summary: "select recalled memories for a prompt (spec 02): JSON request in, plan out",
    options: true,
    load: async () => {
      const m = await import("./json-verbs.js");
      return (p, s) => m.registerJsonVerb(p, s, "select-memory");
    },
  },
  {
    name: "plan-prompt",
    summary: "plan a system prompt under a budget (spec 03): JSON request in, plan out",
    options: true,
    load: async () => {
      const m = await import("./json-verbs.js");
      return (p, s) => m.registerJsonVerb(p, s, "plan-prompt");
    },
  },
  {
    name: "plan-conversation",
    summary:
      "plan a conversation's messages under a token budget (spec 09): JSON request in, plan out",
    options: true,
    load: async () => {
      const m = await import("./json-verbs.js");
      return (p, s) => m.registerJsonVerb(p, s, "plan-conversation");
    },
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
    name: "serve",
    summary:
      "run the HTTP service: POST /v1/select-memory, /v1/plan-prompt, /v1/assemble, /v1/memories, /v1/recall; GET /healthz, /openapi.json",
    options: true,
    load: async () => {
      const m = await import("./serve-cmd.js");
      return (p, s) => m.registerServeCommand(p, s);
    },
  },
  {
    name: "check-draft",
    summary:
      "check a draft reply against red lines (spec 07): exit 4 when a block-severity line is crossed",
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
      "an interactive runtime session (spec 05): fire events, see what was reassembled (commands from stdin; type help)",
    options: true,
    load: async () => (await import("./repl-cmd.js")).registerReplCommand,
  },
];
