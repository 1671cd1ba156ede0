/**
 * The demo's ten-segment system prompt over the data of examples/demo/demo.json
 * (data.ts), and the skills and connectors lines the repl's session segments share.
 */
import type { SegmentInput } from "../../plan/index.js";
import type { DemoData } from "./data.js";

/**
 * `Skills loaded: a (summary), b (summary).` (null when none).
 *
 * @example skillsSummary(demoData(), ["changelog"]) // "Skills loaded: changelog (writes the release note)."
 */
export function skillsSummary(data: DemoData, names: readonly string[]): string | null {
  if (names.length === 0) return null;
  const list = names.map((n) => `${n} (${data.skills[n]?.summary ?? "custom skill"})`).join(", ");
  return `Skills loaded: ${list}.`;
}

/**
 * `Connectors online: a (access), b (access).` (null when none is online).
 *
 * @example connectorsLine(demoData(), ["github"]) // "Connectors online: github (read/write)."
 */
export function connectorsLine(data: DemoData, online: readonly string[]): string | null {
  if (online.length === 0) return null;
  const list = online.map((n) => `${n} (${data.connectors[n] ?? "custom"})`).join(", ");
  return `Connectors online: ${list}.`;
}

/**
 * The ten segments; `memory` is filled from the selection. Base rules, tools and working
 * mode are required.
 *
 * @example planPrompt({ budgetChars: 12000, segments: demoSegments(demoData(), memoryPlan.context) })
 */
export function demoSegments(data: DemoData, memoryBlock: string): SegmentInput[] {
  return [...agentSegments(data, memoryBlock), ...sessionSetupSegments(data)];
}

/** Priorities 0–40: the rules, who the agent is, what it recalled, the project, its tools. */
function agentSegments(data: DemoData, memoryBlock: string): SegmentInput[] {
  return [
    {
      name: "base_rules",
      priority: 0,
      budgetPriority: 100,
      required: true,
      provenance: "builtin",
      cacheTier: "static",
      content: data.text.baseRules,
    },
    {
      name: "identity",
      priority: 10,
      budgetPriority: 80,
      provenance: "identity.md",
      cacheTier: "static",
      content: data.text.identity,
    },
    {
      name: "recalled_memory",
      priority: 20,
      budgetPriority: 60,
      provenance: "memory",
      cacheTier: "dynamic",
      content: memoryBlock,
    },
    {
      name: "project_context",
      priority: 30,
      budgetPriority: 70,
      provenance: "AGENTS.md",
      cacheTier: "session",
      content: data.text.projectContext,
    },
    {
      name: "tools",
      priority: 40,
      budgetPriority: 90,
      required: true,
      provenance: "tool-registry",
      cacheTier: "static",
      content: data.text.tools,
    },
  ];
}

/** Priorities 50–90: the session's expert, skills and connectors, the conventions, the working mode. */
function sessionSetupSegments(data: DemoData): SegmentInput[] {
  return [
    {
      name: "expert",
      priority: 50,
      budgetPriority: 50,
      provenance: "experts/db-migrations",
      cacheTier: "session",
      content: data.experts["db-migrations"] as string,
    },
    {
      name: "skills",
      priority: 60,
      budgetPriority: 40,
      provenance: "skills",
      cacheTier: "session",
      content: skillsSummary(data, ["sql-review", "changelog"]),
    },
    {
      name: "connectors",
      priority: 70,
      budgetPriority: 30,
      provenance: "mcp",
      cacheTier: "session",
      content: connectorsLine(data, ["github", "postgres-staging"]),
    },
    {
      name: "regional_conventions",
      priority: 80,
      budgetPriority: 20,
      provenance: "locale",
      cacheTier: "static",
      content: data.text.regionalConventions,
    },
    {
      name: "working_mode",
      priority: 90,
      budgetPriority: 95,
      required: true,
      provenance: "session",
      cacheTier: "dynamic",
      content: data.workingModes.craft,
    },
  ];
}
