/**
 * Neutral conversation messages (spec 09) in each provider's own shape, and back:
 * Anthropic `tool_use` / `tool_result` blocks, OpenAI Chat `tool_calls` + `tool` messages,
 * Responses `function_call` / `function_call_output` items, AI SDK `ModelMessage` parts.
 */
export {
  type AiSdkConversationMessage,
  type AiSdkMessagesOptions,
  type AiSdkTextPart,
  type AiSdkToolCallPart,
  type AiSdkToolResultPart,
  fromAiSdkMessages,
  toAiSdkMessages,
} from "./ai-sdk.js";
export {
  type AnthropicContentBlock,
  type AnthropicConversationMessage,
  type AnthropicMessageLike,
  type AnthropicMessagesOptions,
  fromAnthropicMessages,
  toAnthropicMessages,
} from "./anthropic.js";
export {
  MessageIds,
  parseArguments,
  type ReadConversation,
  type ToolInput,
  toolNamesOf,
  withTurnPrefix,
} from "./common.js";
export {
  fromOpenAIChatMessages,
  fromOpenAIResponsesInput,
  type OpenAIChatConversationMessage,
  type OpenAIResponsesItem,
  type OpenAITextPart,
  type OpenAIToolCall,
  TOOL_ERROR_PREFIX,
  toOpenAIChatMessages,
  toOpenAIResponsesInput,
} from "./openai.js";
