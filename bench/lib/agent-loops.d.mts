/** Types of agent-loops.mjs (the three agent loops of the study). */
import type { AgentSession, SessionTurn } from "./agent-session.mjs";
export const MODEL: string;
export interface LoopFigures {
  loop: string;
  window: number;
  requests: number;
  input: number;
  read: number;
  write: number;
  cost: number;
  steadyRead: number;
  steadyInput: number;
  breaks: number;
  overWindow: number;
  orphans: number;
  assistantFirst: number;
  needs: number;
  factsKept: number;
  readShare: number;
  factShare: number;
  /** Requests promptctx refused (prompt_budget_exceeded); the first one's message. */
  refused: number;
  refusal: string | null;
}
export function perTurnText(session: AgentSession, turn: SessionTurn): string;
export function systemText(session: AgentSession): string;
export interface Meter {
  add(req: { needs: string[] }, body: unknown, reserve: number): void;
  refuse(req: { needs: string[] }, err: Error): void;
  done(): LoopFigures;
}
export function createMeter(pc: unknown, kind: string, window: number): Meter;
export function runLoop(
  pc: unknown,
  session: AgentSession,
  kind: "naive" | "hand-built" | "server-cleared" | "promptctx",
  window: number,
  overrides?: Record<string, unknown>,
): Promise<LoopFigures>;
export function historyTokens(
  pc: unknown,
  session: AgentSession,
): { tokens: number; toolResults: number };
