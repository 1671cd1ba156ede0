/**
 * `/v1/memories` and `/v1/recall`: scoped writes and reads of the shared memory store, as
 * `promptctx memory import|recall` do them. A request with a scoped token reads and
 * writes the token's scope, whatever its body says (see auth.ts).
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { invalidFromZod, PromptctxError } from "../../errors/index.js";
import { type MemoryRecordInput, type MemoryStore, recallHints } from "../../store/index.js";
import type { Principal } from "../auth.js";
import { MemoriesRequestSchema, RecallRequestSchema } from "../schema.js";

/** What the memory routes read from the server. */
export interface MemoryRouteContext {
  /** The shared store, or `null` (it is opened after the routes are registered). */
  store: () => MemoryStore | null;
  principal: (request: FastifyRequest) => Principal;
  /** The clock of a recall without `asOf` (the only time the service reads one). */
  clock: () => Date;
}

/** The server has no shared memory store. */
export class NoStoreError extends PromptctxError {
  constructor() {
    super(
      "store_not_configured",
      "this server has no memory store: start it with `promptctx serve --store FILE` (an absent FILE is created)",
    );
    this.name = "NoStoreError";
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** `value` with `userScope` set to `scope` when it is an object (else as it is). */
function scoped<T>(value: T, scope: string | null): T {
  return scope !== null && isObject(value) ? { ...value, userScope: scope } : value;
}

function storeOf(ctx: MemoryRouteContext): MemoryStore {
  const store = ctx.store();
  if (store === null) throw new NoStoreError();
  return store;
}

/** Registers `POST /v1/memories` and `POST /v1/recall` (the management routes: memory-manage-routes.ts). */
export function registerMemoryRoutes(app: FastifyInstance, ctx: MemoryRouteContext): void {
  app.post("/v1/memories", async (request) => {
    const parsed = MemoriesRequestSchema.safeParse(request.body);
    if (!parsed.success) throw invalidFromZod(parsed.error);
    const { scope } = ctx.principal(request);
    const records = parsed.data.records.map((r) => scoped(r, scope)) as MemoryRecordInput[];
    const result = await storeOf(ctx).add(records);
    return {
      written: result.inserted + result.updated,
      memoryIds: [...new Set(records.map((r) => r.memoryId))],
      ...(result.quarantined === undefined ? {} : { quarantined: result.quarantined }),
    };
  });

  app.post("/v1/recall", async (request) => {
    const { scope } = ctx.principal(request);
    const parsed = RecallRequestSchema.safeParse(scoped(request.body, scope));
    if (!parsed.success) throw invalidFromZod(parsed.error);
    const r = parsed.data;
    const store = storeOf(ctx);
    const asOf = r.asOf ?? ctx.clock().toISOString();
    const hits = await store.recall(r.query, {
      userScope: r.userScope,
      asOf,
      limit: r.limit ?? 20,
      ...(r.categories !== undefined ? { categories: r.categories } : {}),
    });
    return {
      userScope: r.userScope,
      query: r.query,
      asOf,
      hits,
      hints: recallHints(r.query, store),
    };
  });
}
