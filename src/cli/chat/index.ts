/** `promptctx chat`: the command and its CLI parts (the agent loop itself: src/agent/ and src/workspace/agent.ts). */
export {
  CHAT_MAX_TOKENS,
  CHAT_PROVIDERS,
  type ChatProvider,
  WITHHELD_PLACEHOLDER,
} from "../../agent/index.js";
export { turnRedLines } from "../../workspace/index.js";
export { anthropicTools, builtinArgDocs, openAITools } from "./builtin-tools.js";
export { registerChatCommand } from "./command.js";
export { type ChatCredentials, type ChatEnv, chatCredentials } from "./credentials.js";
export type { ChatIO } from "./io.js";
export { CHAT_CLOCK_STEP_MS, CHAT_MAX_TOOL_ROUNDS, CHAT_MAX_TURNS } from "./settings.js";
