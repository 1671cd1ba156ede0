/**
 * What the MCP server says of itself, written for the model that reads it to choose a
 * tool: each tool's title and description, the resources' and the prompt's.
 */

/** Titles and descriptions of the server's tools, resources and prompt. */
export const TOOL_TEXT = {
  instructions:
    "promptctx keeps this user's long-term memory and assembles the system prompt of the workspace. Call recall before answering anything that may depend on what the user said in earlier sessions (preferences, decisions, facts about them or their project); call remember when the user states something worth keeping for later sessions, and forget when they ask you to drop something; call assemble_context to get the workspace's instructions, skills and knowledge for a request. Everything is scoped to the connected user.",
  recall: {
    title: "Recall memories",
    description:
      "Search this user's long-term memory for a query. Returns the best hits first; each says why it was found (the query terms it contains and their coverage), its scores (total = lexical × salience; salience mixes recency and importance) and the selection gate's decision (selected, or rejected with a reason code such as low_confidence, duplicate_content or conflict_loser). Use it before answering questions that may depend on the user's preferences, past decisions or facts about them. No hits means nothing stored matches: do not guess.",
  },
  remember: {
    title: "Remember",
    description:
      "Store one memory for this user: a self-contained fact, preference or event worth knowing in later sessions (e.g. 'Prefers pytest over unittest'). One fact per call; give conflictKey (e.g. preference:test-framework) when a newer fact should win over an older one. Writing the same memoryId again replaces that memory. Returns the memory's id, whether it was inserted or updated, and the stored record. A memory that reads as instructions to the model (a takeover attempt) is quarantined: stored, but never recalled until the user approves it.",
  },
  forget: {
    title: "Forget a memory",
    description:
      "Delete one of this user's memories by id (as recall or remember reported it), when the user asks to forget it or it is wrong. Every version of it is erased. Returns whether anything was forgotten (false for an id this user does not have).",
  },
  assemble_context: {
    title: "Assemble context",
    description:
      "Assemble the system prompt of the workspace for a request: instruction files, matching skills, knowledge-base passages and this user's relevant memories, within the workspace's budgets. Returns the prompt and a short manifest: each layer with its status, budget and use, and what was dropped and why (reason codes such as char_budget_exceeded or low_confidence). Use it at the start of a task to load the project's rules and context.",
  },
  memoryResource: {
    title: "Memory",
    description: "One of this user's memories, by id (memory://ID), as stored: JSON.",
    mimeType: "application/json",
  },
  instructionsResource: {
    title: "Instruction file",
    description:
      "An instruction file of the workspace (AGENTS.md, CLAUDE.md and the like, and what they import), by its path inside the workspace.",
    mimeType: "text/markdown",
  },
  manifestResource: {
    title: "Last manifest",
    description:
      "The whole manifest of this user's last assembly (assemble_context or the system prompt): every layer, item decision, memory decision and budget; null before the first one.",
    mimeType: "application/json",
  },
  systemPrompt: {
    title: "promptctx system prompt",
    description:
      "The workspace's assembled system prompt for a request (instructions, skills, knowledge and this user's memories), to start a conversation from.",
  },
} as const;
