/**
 * Store errors. Both are {@link PromptctxError}s with code `invalid_input` (the store file
 * is an input the caller chose), so surfaces report them like any other bad input (exit 2).
 */
import { PromptctxError } from "../errors/index.js";

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
