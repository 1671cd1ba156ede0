/**
 * The agent stage: the whole request of one agent turn (the assembled system prompt plus the
 * conversation under one window, docs/conversation.md), the provider middleware and
 * summarizers, and the agent loop (provider connections, tool rounds, the chat history a
 * loop keeps). Sits above assemble and conversation and imports both; nothing below imports it.
 */
export * from "./loop/index.js";
export * from "./request/index.js";
