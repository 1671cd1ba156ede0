/** The agent loop: provider connections, tool definitions and the tool rounds of one user message. */
export { AnthropicConversation } from "./anthropic.js";
export { openConversation } from "./connect.js";
export {
  CHAT_MAX_TOKENS,
  type ChatConnection,
  type Conversation,
  type ModelReply,
  providerFailure,
  type ToolCallRequest,
  type ToolResult,
  usageNumbers,
} from "./conversation.js";
export {
  CHAT_PROVIDERS,
  type ChatCompactionEvent,
  type ChatEvent,
  type ChatLimitEvent,
  type ChatProvider,
  type ChatReplyEvent,
  type ChatToolEvent,
  type ChatTurnEvent,
} from "./events.js";
export {
  CHAT_COMPACT_THRESHOLD_TOKENS,
  CHAT_LOW_WATER_RATIO,
  type ChatContextOptions,
  ChatHistory,
  chatCounter,
} from "./history.js";
export { OpenAIConversation } from "./openai.js";
export { PlannedConversation, type PlannedConversationOptions } from "./planned.js";
export {
  type ChatToolOutcome,
  type ChatToolRunner,
  reviewDraft,
  runToolRounds,
  type ToolRoundsOptions,
  WITHHELD_PLACEHOLDER,
} from "./rounds.js";
export { type ToolArgDocs, toAnthropicTools, toOpenAITools } from "./tool-schemas.js";
