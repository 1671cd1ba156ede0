/** Types of agent-session.mjs (the seeded coding-agent session). */
import type { Message } from "../../src/conversation/index.js";
export interface SessionTurn {
  index: number;
  ask: Message;
  now: string;
  recall: string[];
  kb: string[];
  rounds: { call: Message; results: Message[]; needs?: string[] }[];
  /** Null in a long task's turns before a user nudge: the next ask follows the last round. */
  answer: Message | null;
  needs: string[];
  /** The facts the turn's answer request must carry (long tasks). */
  answerNeeds?: string[];
}
export interface AgentSession {
  instructions: string;
  rules: { id: string; level: string; text: string }[];
  memories: { id: string; text: string; createdAt: string }[];
  kb: { id: string; text: string }[];
  turns: SessionTurn[];
}
/** The seed of the session the bench reports by default. */
export const DEFAULT_SEED: number;
export function makeAgentSession(options?: {
  seed?: number;
  turns?: number;
  toolResults?: number;
  scale?: number;
  instructionsChars?: number;
  needShare?: number;
  needReach?: number;
}): AgentSession;
export function sessionRequests(
  session: AgentSession,
): Generator<{ turn: SessionTurn; messages: Message[]; first: boolean; needs: string[] }>;
