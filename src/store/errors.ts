/**
 * Store errors. Both are {@link PromptctxError}s with code `invalid_input` (the store file
 * is an input the caller chose), so surfaces report them like any other bad input (exit 2).
 */
import { type FieldPath, PromptctxError } from "../errors/index.js";

/**
 * The database was written by a newer promptctx (its schema version is ahead of the
 * migrations this build knows). Opening it would risk corrupting it, so it fails closed.
 *
 * @example new StoreVersionError("/x/memory.db", 7, 1).message
 * // "memory store /x/memory.db has schema version 7; this promptctx supports up to 1 (upgrade promptctx)"
 */
export class StoreVersionError extends PromptctxError {
  readonly found: number;
  readonly supported: number;
  constructor(path: string, found: number, supported: number) {
    super(
      "invalid_input",
      `memory store ${path} has schema version ${found}; this promptctx supports up to ${supported} (upgrade promptctx)`,
      "store",
    );
    this.name = "StoreVersionError";
    this.found = found;
    this.supported = supported;
  }
}

/** The store file cannot be opened or is not a promptctx memory store. */
export class StoreOpenError extends PromptctxError {
  constructor(message: string) {
    super("invalid_input", message, "store");
    this.name = "StoreOpenError";
  }
}

/**
 * A cross-scope read (export, a store-wide count, `get` without a scope) on a PostgreSQL
 * store opened as a role that does not own it: only the owner's connection reads every
 * scope. The message is the same whatever was asked, so it reveals nothing about the data.
 *
 * @example new StorePrivilegeError("exportJsonl", "postgres://app@db/x").code // "invalid_input"
 */
export class StorePrivilegeError extends PromptctxError {
  constructor(what: string, path: string) {
    super(
      "invalid_input",
      `${what} reads every scope: the role of ${path} does not own the memory store; open it with the owner's URL (see \`promptctx store init\`)`,
      "store",
    );
    this.name = "StorePrivilegeError";
  }
}

/**
 * A write the takeover gate caught while the gate is in `reject` mode (HTTP 400): `rule`
 * names the rule (see memory/takeover.ts), `path` the record.
 *
 * @example new MemoryRejectedError("role_marker", ["records", 0, "content"]).code // "memory_rejected"
 */
export class MemoryRejectedError extends PromptctxError {
  readonly rule: string;
  constructor(rule: string, path: FieldPath) {
    super(
      "memory_rejected",
      `the memory reads as an attempt to take over the model (rule ${rule}); it was not stored`,
      path,
    );
    this.name = "MemoryRejectedError";
    this.rule = rule;
  }
}

/**
 * One record over the store's per-record limit (HTTP 413).
 *
 * @example new MemoryTooLargeError(5000, 4096, ["records", 2]).code // "memory_too_large"
 */
export class MemoryTooLargeError extends PromptctxError {
  constructor(bytes: number, limit: number, path: FieldPath) {
    super(
      "memory_too_large",
      `the record is ${bytes} bytes (its JSONL line); the store allows at most ${limit} per record`,
      path,
    );
    this.name = "MemoryTooLargeError";
  }
}

/**
 * A write that would take a scope over its records or bytes limit (HTTP 409); nothing of
 * the write is stored.
 *
 * @example new ScopeFullError("records", 100, ["records", 7, "userScope"]).code // "scope_full"
 */
export class ScopeFullError extends PromptctxError {
  constructor(what: "records" | "bytes", limit: number, path: FieldPath) {
    super(
      "scope_full",
      `the scope would hold more than ${limit} ${what === "records" ? "memories" : "bytes of memories (versions included)"}; forget some first`,
      path,
    );
    this.name = "ScopeFullError";
  }
}
