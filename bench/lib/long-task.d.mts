/** Types of long-task.mjs (a seeded single long task). */
import type { AgentSession } from "./agent-session.mjs";
export function makeLongTask(options?: {
  seed?: number;
  requests?: number;
  nudgeEvery?: number;
  needShare?: number;
  needReach?: number;
}): AgentSession;
