/**
 * promptctx — deterministic, budgeted, explainable context assembly for LLM agents.
 * Each stage is a pure function over plain data; see the README for a tour.
 */
export * from "./agent/index.js";
export * from "./assemble/index.js";
export * from "./cache/index.js";
export * from "./conversation/index.js";
export * from "./errors/index.js";
export * from "./files/index.js";
export * from "./memory/index.js";
export * from "./plan/index.js";
export * from "./render/index.js";
export * from "./sources/index.js";
export * from "./text/index.js";
export * from "./tokens/index.js";
export * from "./trace/index.js";
