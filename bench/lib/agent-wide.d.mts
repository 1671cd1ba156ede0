/** Types of agent-wide.mjs (the wider seeded coding-agent session). */
import type { AgentSession } from "./agent-session.mjs";

export type ResultKind = "code" | "log" | "grep" | "json" | "table" | "prose";
export type FactPlace = "head" | "tail" | "anywhere";
export const KINDS: ResultKind[];
export const PLACES: FactPlace[];

/** Every knob of a seed's session. */
export interface WideProfile {
  turns: number;
  toolTurnShare: number;
  maxRounds: number;
  parallelShare: number;
  kinds: Record<ResultKind, number>;
  sizes: { small: number; medium: number; large: number };
  places: Record<FactPlace, number>;
  needShare: number;
  roundNeedShare: number;
  needReach: number;
  recentBias: boolean;
  instructionsChars: number;
}
export interface PlacedFact {
  turn: number;
  round: number;
  kind: ResultKind;
  fact: string;
  place: FactPlace;
  /** 0-based line of the result's output. */
  line: number;
}
export interface WideNeed {
  turn: number;
  /** The round whose request needs it; -1: the turn's first request. */
  round: number;
  fact: string;
  /** The turn whose tool result holds it. */
  from: number;
}
export interface WideSession extends AgentSession {
  profile: WideProfile;
  facts: PlacedFact[];
  needed: WideNeed[];
}
export function profileOf(seed: number): WideProfile;
export function makeWideSession(options?: { seed?: number; turns?: number }): WideSession;
