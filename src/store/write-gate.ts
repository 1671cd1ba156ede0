/**
 * What every backend checks before it writes a record: the takeover gate (memory/takeover.ts)
 * and the store's limits — one place for both, so SQLite and PostgreSQL hold, reject and
 * refuse alike. A record's size is the UTF-8 bytes of its canonical JSONL line (what export
 * writes), so it is the same on every backend.
 */
import { z } from "zod";
import type { FieldPath } from "../errors/index.js";
import {
  DEFAULT_GATE_MODE,
  GATE_MODES,
  type GateMode,
  screenMemoryText,
  type TakeoverRule,
} from "../memory/index.js";
import { MemoryRejectedError, MemoryTooLargeError, ScopeFullError } from "./errors.js";
import { parseWith } from "./options.js";
import { type MemoryRecord, type MemoryStatus, recordToJsonLine } from "./schema.js";

export { MEMORY_STATUSES, type MemoryStatus } from "./schema.js";

/** Limits of a store (absent: no limit). Versions count toward `maxScopeBytes`. */
export interface StoreLimits {
  /** Largest record, in bytes of its JSONL line. */
  maxRecordBytes?: number;
  /** Most memories (current records, any status) per scope. */
  maxScopeRecords?: number;
  /** Most bytes per scope: its records and their previous versions. */
  maxScopeBytes?: number;
}

/** The write options both backends take when opened (and `add` per call). */
export interface WritePolicy {
  /** What the takeover gate does with a caught record. Default `quarantine`. */
  gate: GateMode;
  limits: StoreLimits;
}

const limit = z.number().int().min(1).optional();
const PolicySchema = z.strictObject({
  gate: z.enum(GATE_MODES).default(DEFAULT_GATE_MODE),
  limits: z
    .strictObject({ maxRecordBytes: limit, maxScopeRecords: limit, maxScopeBytes: limit })
    .default({}),
});

/**
 * The write policy of a store's open options, validated (unknown keys refused).
 *
 * @example writePolicy({ gate: "reject" }) // { gate: "reject", limits: {} }
 */
export function writePolicy(options: { gate?: unknown; limits?: unknown }): WritePolicy {
  const o: Record<string, unknown> = {};
  if (options.gate !== undefined) o.gate = options.gate;
  if (options.limits !== undefined) o.limits = options.limits;
  return parseWith(PolicySchema, o, "options") as WritePolicy;
}

/** A record ready to be written: what the gate decided, and its size. */
export interface PreparedWrite {
  record: MemoryRecord;
  status: MemoryStatus;
  /** The rule that caught it (`quarantined`), else null. */
  rule: TakeoverRule | null;
  bytes: number;
}

/**
 * Screens and measures one record: over `maxRecordBytes` → {@link MemoryTooLargeError};
 * caught by the gate → `quarantined` (or {@link MemoryRejectedError} in `reject` mode).
 *
 * @example prepareWrite(record, { gate: "quarantine", limits: {} }, ["records", 0]).status // "active"
 */
export function prepareWrite(r: MemoryRecord, policy: WritePolicy, path: FieldPath): PreparedWrite {
  const bytes = Buffer.byteLength(recordToJsonLine(r), "utf8");
  const max = policy.limits.maxRecordBytes;
  if (max !== undefined && bytes > max) throw new MemoryTooLargeError(bytes, max, path);
  const hit = policy.gate === "off" ? null : screenMemoryText(r);
  if (hit === null) return { record: r, status: "active", rule: null, bytes };
  if (policy.gate === "reject") throw new MemoryRejectedError(hit.rule, [...path, "content"]);
  return { record: r, status: "quarantined", rule: hit.rule, bytes };
}

/** A scope's usage: current memories and bytes (versions included). */
export interface ScopeUsage {
  records: number;
  bytes: number;
}

/**
 * Checks a batch against the scope limits as it is written: `usage(scope)` reads a scope's
 * usage once (inside the write transaction), then each write adds to it. Throwing rolls
 * the whole transaction back, so nothing of the batch stays.
 */
export class ScopeBudget {
  readonly #limits: StoreLimits;
  readonly #usage: (scope: string) => ScopeUsage;
  readonly #seen = new Map<string, ScopeUsage>();

  constructor(limits: StoreLimits, usage: (scope: string) => ScopeUsage) {
    this.#limits = limits;
    this.#usage = usage;
  }

  /** True when a limit is set (else nothing is read). */
  get active(): boolean {
    return this.#limits.maxScopeRecords !== undefined || this.#limits.maxScopeBytes !== undefined;
  }

  /** Counts one write in: `inserted` adds a memory; every write adds its bytes. */
  add(scope: string, bytes: number, inserted: boolean, path: FieldPath): void {
    if (!this.active) return;
    let u = this.#seen.get(scope);
    if (u === undefined) {
      u = { ...this.#usage(scope) };
      this.#seen.set(scope, u);
    }
    if (inserted) u.records++;
    u.bytes += bytes;
    const { maxScopeRecords, maxScopeBytes } = this.#limits;
    if (maxScopeRecords !== undefined && u.records > maxScopeRecords) {
      throw new ScopeFullError("records", maxScopeRecords, [...path, "userScope"]);
    }
    if (maxScopeBytes !== undefined && u.bytes > maxScopeBytes) {
      throw new ScopeFullError("bytes", maxScopeBytes, [...path, "userScope"]);
    }
  }
}
