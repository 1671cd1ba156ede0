/** `promptctx chat`: the command and its CLI parts (the agent loop itself: src/assemble/chat/ and src/workspace/chat.ts). */
export {
  CHAT_MAX_TOKENS,
  CHAT_PROVIDERS,
  type ChatProvider,
  WITHHELD_PLACEHOLDER,
} from "../../assemble/chat/index.js";
export { turnRedLines } from "../../workspace/index.js";
export { anthropicTools, builtinArgDocs, openAITools } from "./builtin-tools.js";
export { registerChatCommand } from "./command.js";
export { type ChatCredentials, type ChatEnv, chatCredentials } from "./credentials.js";
export type { ChatIO } from "./io.js";
export { CHAT_CLOCK_STEP_MS, CHAT_MAX_TOOL_ROUNDS, CHAT_MAX_TURNS } from "./settings.js";
