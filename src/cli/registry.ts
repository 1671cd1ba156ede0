/**
 * The one table that imports the verbs' modules: how to load each verb of verbs.ts. The
 * modules are imported only when their verb runs (`main` loads the one verb a command line
 * names, so each verb loads only what it uses, and `--help` loads none). No verb imports
 * this file.
 */
import type { RegisterVerb, VerbName } from "./verbs.js";

const jsonVerb =
  (name: "select-memory" | "plan-prompt" | "plan-conversation" | "assemble-context") =>
  async (): Promise<RegisterVerb> => {
    const m = await import("./json/command.js");
    return (program, setExit) => m.registerJsonVerb(program, setExit, name);
  };

/**
 * Each verb's loader, by name: every verb of verbs.ts has one (the type checks it).
 *
 * @example
 * const register = await VERB_LOADERS.demo();
 * register(program, (code) => { process.exitCode = code; });
 */
export const VERB_LOADERS: Readonly<Record<VerbName, () => Promise<RegisterVerb>>> = {
  "select-memory": jsonVerb("select-memory"),
  "plan-prompt": jsonVerb("plan-prompt"),
  "plan-conversation": jsonVerb("plan-conversation"),
  "assemble-context": jsonVerb("assemble-context"),
  demo: async () => (await import("./demo/command.js")).registerDemoCommand,
  assemble: async () => (await import("./assemble-cmd.js")).registerAssembleCommand,
  memory: async () => (await import("./memory/command.js")).registerMemoryCommands,
  store: async () => (await import("./store-cmd.js")).registerStoreCommands,
  serve: async () => (await import("./serve-cmd.js")).registerServeCommand,
  mcp: async () => (await import("./mcp/command.js")).registerMcpCommand,
  replay: async () => (await import("./replay-cmd.js")).registerReplayCommand,
  inspect: async () => (await import("./inspect-cmd.js")).registerInspectCommand,
  "check-draft": async () => (await import("./check-draft-cmd.js")).registerCheckDraftCommand,
  chat: async () => (await import("./chat/command.js")).registerChatCommand,
  repl: async () => (await import("./repl/command.js")).registerReplCommand,
};
