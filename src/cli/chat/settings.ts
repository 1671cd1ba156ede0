/** The flags of `promptctx chat` checked and resolved, before anything is read: limits, clock, credentials, workspace. */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  CHAT_COMPACT_THRESHOLD_TOKENS,
  CHAT_MAX_TOKENS,
  type ChatContextOptions,
  type ChatProvider,
} from "../../agent/index.js";
import { InvalidInputError } from "../../errors/index.js";
import { contextWindowFor } from "../../render/index.js";
import { instantMillis } from "../../text/index.js";
import { budgetCharsFlag, intFlag } from "../io.js";
import { type ChatCredentials, type ChatEnv, chatCredentials } from "./credentials.js";

/** Default `--max-turns`. */
export const CHAT_MAX_TURNS = 8;
/** Default `--max-tool-rounds`. */
export const CHAT_MAX_TOOL_ROUNDS = 5;
/** Minutes the pinned clock advances per turn. */
export const CHAT_CLOCK_STEP_MS = 60_000;

/** The flags as commander parses them. */
export interface ChatFlags {
  workspace: string;
  user?: string;
  mode?: string;
  maxTurns?: string;
  maxToolRounds?: string;
  now?: string;
  allowRun?: boolean;
  provider?: ChatProvider;
  json?: boolean;
  store?: string;
  budget?: string;
  budgetChars?: string;
  contextWindow?: string;
  compactThreshold?: string;
  toolResultMaxTokens?: string;
  userFiles: boolean;
  record?: string;
}

/** What the flags and the environment resolve to. */
export interface ChatSettings {
  maxTurns: number;
  maxRounds: number;
  /** `--now` in epoch milliseconds, or null for the current time at each turn. */
  base: number | null;
  budget: number | undefined;
  creds: ChatCredentials;
  /** The workspace directory, resolved (it exists). */
  root: string;
  /** How the history is planned against the model's window. */
  context: ChatContextOptions;
}

function nowBase(value: string | undefined): number | null {
  if (value === undefined) return null;
  const ms = instantMillis(value);
  if (ms === null) {
    throw new InvalidInputError(
      `--now must be an ISO-8601 timestamp, got ${JSON.stringify(value)}`,
      "--now",
    );
  }
  return ms;
}

function positiveFlag(value: string | undefined, flag: string, fallback: number): number {
  const n = intFlag(value, flag);
  if (n === undefined) return fallback;
  if (n < 1) throw new InvalidInputError(`${flag} must be at least 1, got ${n}`, flag);
  return n;
}

/**
 * The history's planning: the model's window (`--context-window`, else the table's; an
 * unknown model needs the flag), the compaction threshold (`--compact-threshold`, 0 turns
 * compaction off) and the tool-result cap.
 */
function chatContext(flags: ChatFlags, model: string): ChatContextOptions {
  const contextWindow = intFlag(flags.contextWindow, "--context-window");
  if (contextWindow !== undefined && contextWindow < 1) {
    throw new InvalidInputError("--context-window must be at least 1", "--context-window");
  }
  if (contextWindow === undefined) {
    try {
      contextWindowFor(model); // the table knows it: every request reads it from there
    } catch {
      throw new InvalidInputError(
        `no context window known for MODEL_ID ${JSON.stringify(model)}: pass --context-window`,
        "--context-window",
      );
    }
  }
  const threshold = intFlag(flags.compactThreshold, "--compact-threshold");
  const maxResult = intFlag(flags.toolResultMaxTokens, "--tool-result-max-tokens");
  if (maxResult !== undefined && maxResult < 32) {
    throw new InvalidInputError(
      "--tool-result-max-tokens must be at least 32",
      "--tool-result-max-tokens",
    );
  }
  return {
    ...(contextWindow !== undefined ? { contextWindow } : {}),
    responseReserve: CHAT_MAX_TOKENS,
    compactThresholdTokens:
      threshold === undefined ? CHAT_COMPACT_THRESHOLD_TOKENS : threshold === 0 ? null : threshold,
    toolResultMaxTokens: maxResult ?? null,
  };
}

/** Checks the flags, the credentials and the workspace, in that order (`invalid_input` on the first problem). */
export function chatSettings(flags: ChatFlags, env: ChatEnv): ChatSettings {
  const maxTurns = positiveFlag(flags.maxTurns, "--max-turns", CHAT_MAX_TURNS);
  const maxRounds = positiveFlag(flags.maxToolRounds, "--max-tool-rounds", CHAT_MAX_TOOL_ROUNDS);
  const base = nowBase(flags.now);
  const budget = budgetCharsFlag(flags);
  const creds = chatCredentials(env, flags.provider);
  const context = chatContext(flags, creds.model);
  const root = resolve(flags.workspace);
  if (!existsSync(root)) {
    throw new InvalidInputError(`workspace ${flags.workspace} does not exist`, "--workspace");
  }
  return { maxTurns, maxRounds, base, budget, creds, root, context };
}

/** The clock of turn `turn` (from 1): `--now` plus one step per earlier turn, else the current time. */
export function turnNow(base: number | null, turn: number): string {
  return base === null
    ? new Date().toISOString()
    : new Date(base + (turn - 1) * CHAT_CLOCK_STEP_MS).toISOString();
}

/** The user-level instruction files that exist under `home`. */
export function userInstructionFiles(home: string): string[] {
  return [join(home, ".config/promptctx/AGENTS.md"), join(home, ".claude/CLAUDE.md")].filter((p) =>
    existsSync(p),
  );
}
