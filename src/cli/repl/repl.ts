/**
 * `promptctx repl`: an interactive runtime session (docs/session-and-cache.md) in the terminal. Each command
 * fires a session event (load a skill, switch expert, working mode, schema, connector,
 * install or clear recalled memory, switch user) and prints what was reassembled — the
 * rebuilt segments, or `reused cached plan` — with the decision tables. Conversation
 * events (a user turn, a reply, a tool call, a tool result; see conversation.ts)
 * replan the whole request (docs/conversation.md) over the current assembly. Lines come from
 * stdin, so a script of commands is a reproducible transcript: the clock is fixed and
 * advances one minute per reassembly. The terminal loop is io.ts.
 */
import type { Assembly, SessionMemoryPolicy } from "../../assemble/index.js";
import { type CacheKeys, cacheBreak } from "../../cache/index.js";
import { InvalidInputError, toErrorObject } from "../../errors/index.js";
import { CACHE_TIERS } from "../../plan/index.js";
import { getRenderer } from "../../render/index.js";
import { compareCodePoints } from "../../text/index.js";
import { resolveTokenCounter } from "../../tokens/index.js";
import type { AssemblyManifest } from "../../trace/index.js";
import { demoData, replData } from "../demo/data.js";
import { budgetCharsFlag, usage } from "../io.js";
import { renderTable, type TableStyle } from "../table.js";
import { layerTable, memoryDecisionTable, segmentDecisionTable } from "../tables.js";
import { CONVERSATION_HELP, isConversationCommand, ReplConversation } from "./conversation.js";
import { createReplSession, type ReplFixture, skillBody } from "./session.js";

/** Flags of `promptctx repl`. */
export interface ReplFlags {
  renderer?: string;
  tokenizer?: string;
  /** Global char budget as typed (a non-negative integer). */
  budget?: string;
  budgetChars?: string;
  /** Initial schema mode. */
  mode?: string;
  /** Tables at full width. */
  wide?: boolean;
}

const HELP = `Commands
  show                         the current prompt structure (layers) and the prompt
  skill load|unload NAME       load or unload a bundled skill (skill list: the names)
  expert NAME|none             switch the expert (expert list: the names)
  mode craft|plan|ask          switch the working mode
  schema MODE                  switch the schema mode (chat, tool, rag, react; others fall back to chat)
  connector NAME on|off        bring a connector online or offline (connector list: the names)
  identity TEXT                change the identity file's text
  memory                       install the offline recall fixture for this query
  memory clear                 clear recalled memory
  query TEXT                   end the current query (clears memory) and ask TEXT
  user SCOPE                   switch the user scope (clears memory)
  stats                        builder calls, reassemblies, cache reuses, cache keys, last cache break
${CONVERSATION_HELP}
  help                         this text
  quit | exit                  leave (so does end of input)`;

const MINUTE_MS = 60_000;

/** `policy minScore 0.35, topK 5, maxChars 3000, maxTokens 800 (docs/memory-selection.md defaults)`. */
function policyLine(used: SessionMemoryPolicy): string {
  const p = used.policy;
  const n = (v: number | null) => (v === null ? "unbounded" : String(v));
  const from = {
    call: "given with the memory",
    schema: "the schema's recall slot",
    defaults: "the built-in defaults",
  }[used.from];
  return `policy minScore ${p.minScore}, topK ${n(p.topK)}, maxChars ${n(p.maxChars)}, maxTokens ${n(p.maxTokens)} (${from})`;
}

const formatKeys = (keys: CacheKeys) => CACHE_TIERS.map((t) => `${t} ${keys[t] ?? "-"}`).join(", ");

// Layers whose content or decision differs between two assemblies.
function changedLayers(before: AssemblyManifest, after: AssemblyManifest): string[] {
  const old = new Map(before.layers.map((l) => [l.id, l]));
  return after.layers
    .filter((l) => {
      const o = old.get(l.id);
      return o === undefined || o.versionId !== l.versionId || o.status !== l.status;
    })
    .map((l) => l.id);
}

const known = (table: Readonly<Record<string, unknown>>) =>
  Object.keys(table).sort(compareCodePoints).join(", ");

/** What a command did: fired an event (`memoryEvent`: it changed recalled memory), or only lists names. */
type Fired = { memoryEvent: boolean } | string;
const NO_MEMORY_EVENT: Fired = { memoryEvent: false };

/**
 * One repl: a fixture session, a fixed clock and counters. {@link Repl.execute} runs one
 * command line and returns what to print, so the repl is testable without a terminal.
 *
 * @example
 * const repl = new Repl({}, { color: false, width: null });
 * await repl.execute("show"); // the first assembly builds every segment
 * (await repl.execute("skill load sql-review")).output; // "rebuilt: skills\n…"
 */
export class Repl {
  private readonly fixture: ReplFixture;
  /** How output is drawn: tables and text fitted to its width. */
  readonly style: TableStyle;
  private readonly conversation: ReplConversation;
  private query = replData().query;
  private last: Assembly | null = null;
  private previous: Assembly | null = null;
  private lastNow: string = replData().start;
  private pending = true;
  private reassemblies = 0;
  private reuses = 0;
  private errors = 0;

  constructor(flags: ReplFlags, style: TableStyle) {
    const tokenCounter = resolveTokenCounter(flags.tokenizer ?? "estimate", "--tokenizer");
    const renderer = getRenderer(flags.renderer ?? "en");
    const budgetChars = budgetCharsFlag(flags);
    const mode = flags.mode ?? "chat";
    if (mode.trim() === "") throw new InvalidInputError("--mode must not be blank", "--mode");
    this.fixture = createReplSession({
      mode,
      renderer,
      tokenCounter,
      ...(budgetChars !== undefined ? { budgetChars } : {}),
    });
    this.style = style;
    this.conversation = new ReplConversation(tokenCounter);
  }

  private get session() {
    return this.fixture.session;
  }

  /** Runs one command line; `quit` is true for `quit` / `exit`. */
  async execute(line: string): Promise<{ output: string; quit: boolean }> {
    const words = line.trim().split(/\s+/).filter(Boolean);
    const [cmd, ...args] = words;
    if (cmd === undefined || cmd.startsWith("#")) return { output: "", quit: false };
    if (cmd === "quit" || cmd === "exit") return { output: "", quit: true };
    try {
      return { output: await this.dispatch(cmd, args, line), quit: false };
    } catch (err) {
      this.errors++;
      const { error } = toErrorObject(err);
      const at = error.path ? ` (at ${error.path})` : "";
      if (error.code === "internal_error" && process.env.PROMPTCTX_DEBUG && err instanceof Error) {
        process.stderr.write(`${err.stack ?? err.message}\n`);
      }
      return { output: `error: ${error.code}: ${error.message}${at}`, quit: false };
    }
  }

  private async dispatch(cmd: string, args: string[], line: string): Promise<string> {
    switch (cmd) {
      case "help":
        return HELP;
      case "show":
        if (args.length > 0) usage("show");
        return this.show();
      case "stats":
        if (args.length > 0) usage("stats");
        return this.stats();
    }
    if (isConversationCommand(cmd)) {
      const rest = line.trim().slice(cmd.length).trim();
      return this.conversation.execute(cmd, rest, () => this.refresh(), this.style);
    }
    const s = this.session;
    const before = { state: s.current, memory: s.hasMemory };
    const fired = this.fire(cmd, args, line.trim().slice(cmd.length).trim(), before.memory);
    if (typeof fired === "string") return fired;
    // Every event replaces the session state, except memory (tracked by the event).
    if (s.current !== before.state || fired.memoryEvent) this.pending = true;
    const assembly = await this.refresh();
    return [this.status(assembly), this.memoryTable(assembly), this.segmentTable(assembly)].join(
      "\n\n",
    );
  }

  /**
   * Fires the session event of one command (`rest`: the line after the command word).
   * Returns what to print instead when the command only lists names.
   */
  private fire(cmd: string, args: string[], rest: string, hadMemory: boolean): Fired {
    const s = this.session;
    switch (cmd) {
      case "skill":
        return this.skillCommand(args);
      case "expert":
        return this.expertCommand(args);
      case "mode":
        if (args.length !== 1) usage("mode craft|plan|ask");
        s.setWorkingMode(args[0] as "craft");
        return NO_MEMORY_EVENT;
      case "schema":
        if (args.length !== 1) usage("schema MODE");
        s.setMode(args[0] as string);
        return NO_MEMORY_EVENT;
      case "connector":
        return this.connectorCommand(args);
      case "identity":
        if (args.length === 0) usage("identity TEXT");
        s.setIdentity(rest);
        return NO_MEMORY_EVENT;
      case "memory":
        return this.memoryCommand(args, hadMemory);
      case "query":
        if (args.length === 0) usage("query TEXT");
        s.endQuery();
        this.query = rest;
        return { memoryEvent: true };
      case "user":
        if (args.length !== 1) usage("user SCOPE");
        s.setUserScope(args[0] as string);
        return NO_MEMORY_EVENT;
      default:
        throw new InvalidInputError(
          `unknown command ${JSON.stringify(cmd)} (type help for the commands)`,
          "command",
        );
    }
  }

  private skillCommand(args: string[]): Fired {
    const [verb, name, ...extra] = args;
    if (verb === "list" && name === undefined) return this.list("skills", demoData().skills);
    if ((verb !== "load" && verb !== "unload") || name === undefined || extra.length > 0) {
      usage("skill load|unload NAME");
    }
    const body = skillBody(name);
    if (body === undefined) {
      throw new InvalidInputError(
        `unknown skill ${JSON.stringify(name)} (known: ${known(demoData().skills)})`,
        "skill",
      );
    }
    if (verb === "load") this.session.loadSkill(name, body);
    else this.session.unloadSkill(name);
    return NO_MEMORY_EVENT;
  }

  private expertCommand(args: string[]): Fired {
    const { experts } = demoData();
    const [name, ...extra] = args;
    if (name === undefined || extra.length > 0) usage("expert NAME|none");
    if (name === "list") return this.list("experts", experts);
    if (name !== "none" && !Object.hasOwn(experts, name)) {
      throw new InvalidInputError(
        `unknown expert ${JSON.stringify(name)} (known: ${known(experts)}, or none)`,
        "expert",
      );
    }
    this.session.switchExpert(name === "none" ? null : name);
    return NO_MEMORY_EVENT;
  }

  private connectorCommand(args: string[]): Fired {
    const { connectors } = demoData();
    const [name, state, ...extra] = args;
    if (name === "list" && state === undefined) return this.list("connectors", connectors);
    if (name === undefined || (state !== "on" && state !== "off") || extra.length > 0) {
      usage("connector NAME on|off");
    }
    if (!Object.hasOwn(connectors, name)) {
      throw new InvalidInputError(
        `unknown connector ${JSON.stringify(name)} (known: ${known(connectors)})`,
        "connector",
      );
    }
    this.session.setConnector(name, state === "on");
    return NO_MEMORY_EVENT;
  }

  // Clearing memory is an event only when some was installed.
  private memoryCommand(args: string[], hadMemory: boolean): Fired {
    if (args.length === 0) {
      const { candidates } = demoData();
      this.session.setRecalledMemory(candidates, { importance: replData().importance });
      return { memoryEvent: true };
    }
    if (args.length === 1 && args[0] === "clear") {
      this.session.clearRecalledMemory();
      return { memoryEvent: hadMemory };
    }
    usage("memory | memory clear");
  }

  // Assembles for the current state. The clock advances one minute per reassembly, so an
  // unchanged state asks with the same instant and the session reuses its cached plan.
  private async refresh(): Promise<Assembly> {
    const now =
      this.pending || this.last === null
        ? new Date(Date.parse(replData().start) + this.reassemblies * MINUTE_MS)
            .toISOString()
            .replace(".000Z", "Z")
        : this.lastNow;
    const assembly = await this.session.assemble({ text: this.query, now });
    if (this.session.report.reused) {
      this.reuses++;
    } else {
      this.previous = this.last;
      this.last = assembly;
      this.lastNow = now;
      this.reassemblies++;
      this.pending = false;
    }
    return assembly;
  }

  private status(assembly: Assembly): string {
    const report = this.session.report;
    if (report.reused) return `reused cached plan (now ${this.lastNow}; nothing changed)`;
    const m = assembly.manifest;
    const rebuilt =
      report.rebuilt.length > 0 ? report.rebuilt.join(", ") : "none (slots refetched)";
    const lines = [`rebuilt: ${rebuilt}`];
    const schema = `schema ${m.mode}${m.fallbackFrom === null ? "" : ` (fallback from ${JSON.stringify(m.fallbackFrom)})`}`;
    if (this.previous === null) {
      lines.push("changed layers: all (first assembly)");
      lines.push(`reassembled at ${m.now}, ${schema}, cache keys ${formatKeys(m.cacheKeys)}`);
    } else {
      const changed = changedLayers(this.previous.manifest, m);
      const broke = cacheBreak(this.previous.manifest.cacheKeys, m.cacheKeys);
      lines.push(`changed layers: ${changed.length > 0 ? changed.join(", ") : "none"}`);
      lines.push(`reassembled at ${m.now}, ${schema}, cache break: ${broke ?? "none"}`);
    }
    return lines.join("\n");
  }

  private memoryTable(assembly: Assembly): string {
    if (assembly.memoryPlan === null) {
      return "Memory selection — inactive (no recalled memory installed)";
    }
    const table = memoryDecisionTable(assembly.memoryPlan, this.style);
    const used = this.session.memoryPolicy;
    return used === null ? table : `${table}\n${policyLine(used)}`;
  }

  private segmentTable(assembly: Assembly): string {
    return segmentDecisionTable(assembly.segmentPlan, this.style);
  }

  private async show(): Promise<string> {
    const assembly = await this.refresh();
    return [
      this.status(assembly),
      layerTable(assembly.manifest, this.style),
      this.memoryTable(assembly),
      `Prompt\n======\n${assembly.prompt}`,
    ].join("\n\n");
  }

  private list(what: string, table: Readonly<Record<string, unknown>>): string {
    return `${what}: ${known(table)}`;
  }

  private stats(): string {
    const s = this.session;
    const st = s.current;
    const skills = [...st.skills.keys()].sort(compareCodePoints);
    const online = [...st.connectors]
      .filter(([, on]) => on)
      .map(([n]) => n)
      .sort(compareCodePoints);
    const calls = s.builderCalls;
    const rows = [...calls].map(([segment, n]) => ({ segment, n }));
    const lines = [
      `Session — user ${JSON.stringify(st.userScope)}, schema ${st.mode}, working mode ${st.workingMode}, expert ${st.expert ?? "none"}`,
      `skills: ${skills.length > 0 ? skills.join(", ") : "none"}; connectors online: ${online.length > 0 ? online.join(", ") : "none"}; memory: ${s.hasMemory ? "installed" : "none"}`,
      `reassemblies: ${this.reassemblies}, cache reuses: ${this.reuses}, errors: ${this.errors}, now ${this.lastNow}`,
      "",
      "Builder calls",
      renderTable(
        rows,
        [
          { header: "segment", cell: (r) => r.segment },
          { header: "calls", cell: (r) => r.n, align: "right" },
        ],
        this.style,
      ),
      "",
    ];
    if (this.last === null) {
      lines.push("cache keys: - (nothing assembled yet)", "last cache break: -");
    } else {
      lines.push(`cache keys: ${formatKeys(this.last.manifest.cacheKeys)}`);
      lines.push(
        this.previous === null
          ? "last cache break: - (one assembly so far)"
          : `last cache break: ${cacheBreak(this.previous.manifest.cacheKeys, this.last.manifest.cacheKeys) ?? "none"} (previous assembly → last assembly)`,
      );
    }
    return lines.join("\n");
  }
}
