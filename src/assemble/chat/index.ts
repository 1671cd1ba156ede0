/** The chat library: provider conversations, tool definitions and the agent loop of one user message. */
export { AnthropicConversation } from "./anthropic.js";
export { openConversation } from "./connect.js";
export {
  CHAT_MAX_TOKENS,
  CHAT_PROVIDERS,
  type ChatConnection,
  type ChatProvider,
  type Conversation,
  type ModelReply,
  providerFailure,
  type ToolCallRequest,
  type ToolResult,
  usageNumbers,
} from "./conversation.js";
export type {
  ChatEvent,
  ChatLimitEvent,
  ChatReplyEvent,
  ChatToolEvent,
  ChatTurnEvent,
} from "./events.js";
export { OpenAIConversation } from "./openai.js";
export {
  type ChatToolOutcome,
  type ChatToolRunner,
  reviewDraft,
  runToolRounds,
  type ToolRoundsOptions,
  WITHHELD_PLACEHOLDER,
} from "./rounds.js";
export { type ToolArgDocs, toAnthropicTools, toOpenAITools } from "./tool-schemas.js";
