/**
 * The MCP tools' input schemas: strict (an unknown argument is refused with its path, so a
 * client cannot slip in a `userScope`), with descriptions written for the model that picks
 * a tool and fills its arguments. The scope is never an argument: it is the session's.
 */
import { z } from "zod";
import { AUTHORITIES } from "../../memory/index.js";
import { storedNonBlank, storedText } from "../../store/index.js";
import { isoTimestamp, nonBlankString } from "../../text/index.js";
import { TOKENIZER_NAMES } from "../../tokens/index.js";
import { RENDERERS } from "../schema.js";

/** The longest memory `remember` writes, in characters (UTF-16 code units). */
export const MAX_MEMORY_CHARS = 8000;
/** The longest summary of a memory, in characters. */
export const MAX_SUMMARY_CHARS = 1000;
/** The most tags on one memory, and the longest tag. */
export const MAX_TAGS = 32;
export const MAX_TAG_CHARS = 100;
/** The longest memory id, category, kind or conflict key. */
export const MAX_NAME_CHARS = 200;
/** The longest query `recall`, `assemble_context` and the `system` prompt take. */
export const MAX_QUERY_CHARS = 4000;
/** The most hits one `recall` returns. */
export const MAX_RECALL_LIMIT = 50;

const name = storedNonBlank.pipe(z.string().max(MAX_NAME_CHARS));
const now = isoTimestamp.describe(
  "ISO-8601 instant that ages and recency are measured against (default: the server's clock). Give it only to reproduce an earlier answer.",
);
const query = nonBlankString.pipe(z.string().max(MAX_QUERY_CHARS));

/** `recall`: full-text recall in the session's scope, with each hit explained. */
export const RecallArgsSchema = z.strictObject({
  query: query.describe(
    "What to look for, in plain words (e.g. 'preferred test framework'). Stop words are ignored; the terms that matched are reported per hit.",
  ),
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_RECALL_LIMIT)
    .optional()
    .describe(`Most hits to return, best first (1..${MAX_RECALL_LIMIT}, default 10).`),
  categories: z
    .array(name)
    .max(MAX_TAGS)
    .optional()
    .describe("Only memories of these categories (e.g. ['preference']); default: all."),
  now: now.optional(),
});

/** `remember`: one memory, written under every rule of the store. */
export const RememberArgsSchema = z.strictObject({
  content: storedNonBlank
    .pipe(z.string().max(MAX_MEMORY_CHARS))
    .describe(
      `The memory itself: one self-contained fact, preference or event, in a sentence or two (at most ${MAX_MEMORY_CHARS} characters). Write it so it is understood without this conversation.`,
    ),
  memoryId: name
    .optional()
    .describe(
      "Stable id to write (the same id replaces the earlier memory). Default: derived from the content and the time, so each call adds a new memory.",
    ),
  kind: name
    .optional()
    .describe(
      "profile (who the user is, always shown), fact (default), episodic (something that happened), conversation, or another word.",
    ),
  category: name
    .optional()
    .describe("A short grouping word such as preference, project, identity (default general)."),
  tags: z
    .array(storedNonBlank.pipe(z.string().max(MAX_TAG_CHARS)))
    .max(MAX_TAGS)
    .optional()
    .describe("Keywords that should find this memory even when its text does not say them."),
  summary: storedText
    .pipe(z.string().max(MAX_SUMMARY_CHARS))
    .optional()
    .describe("A shorter form shown in place of the content for profile memories."),
  importance: z
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe("How much it matters, 0..1 (default 0.5); raises its recall score."),
  conflictKey: name
    .optional()
    .describe(
      "The slot this fact fills, e.g. preference:language: of memories with the same key only the best one is used.",
    ),
  authority: z
    .enum(AUTHORITIES)
    .optional()
    .describe(
      "Who stated it, strongest first: current_turn, workspace_override, user_default (default: none).",
    ),
  now: isoTimestamp.optional().describe("ISO-8601 capture time (default: the server's clock)."),
});

/** `forget`: one memory of the session's scope, by id. */
export const ForgetArgsSchema = z.strictObject({
  memoryId: name.describe("The id of the memory to forget, as recall or remember reported it."),
});

/** `assemble_context`: the workspace's system prompt for a query. */
export const AssembleArgsSchema = z.strictObject({
  query: query.describe("The user's request for this turn: what the prompt is assembled for."),
  workspace: nonBlankString
    .optional()
    .describe(
      "A directory inside the server's workspace root, relative to it (default: the root). Paths outside the root are refused.",
    ),
  mode: name
    .optional()
    .describe("Schema mode: chat, tool, rag, react (default: the workspace config's, else react)."),
  budgetChars: z
    .number()
    .int()
    .min(0)
    .nullable()
    .optional()
    .describe(
      "Character budget of the whole prompt (default: the config's, else 12000); null: none.",
    ),
  budgetTokens: z
    .number()
    .int()
    .min(0)
    .nullable()
    .optional()
    .describe("Token budget of the whole prompt (default: the config's, else none); null: none."),
  tokenizer: z
    .enum(TOKENIZER_NAMES)
    .optional()
    .describe("Token counter (default: the workspace config's)."),
  renderer: z
    .enum(RENDERERS)
    .optional()
    .describe("Slot renderer (default: the config's, else en)."),
  now: now.optional(),
});

/** The `system` prompt's arguments (MCP prompt arguments are strings). */
export const SystemPromptArgs = {
  query: query.describe("The user's request the system prompt is assembled for."),
  workspace: nonBlankString
    .optional()
    .describe("A directory inside the workspace root, relative to it (default: the root)."),
};

export type RecallArgs = z.output<typeof RecallArgsSchema>;
export type RememberArgs = z.output<typeof RememberArgsSchema>;
export type ForgetArgs = z.output<typeof ForgetArgsSchema>;
export type AssembleArgs = z.output<typeof AssembleArgsSchema>;
