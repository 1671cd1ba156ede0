/**
 * The memory management routes: `GET /v1/memories` (a page of a scope), `GET
 * /v1/memories/{memoryId}` (one entry), `GET /v1/memories/{memoryId}/history`, `POST
 * /v1/memories/{memoryId}/approve`, `DELETE /v1/memories/{memoryId}` and `POST
 * /v1/memories/forget`. The scope is the token's for a scoped token, else the request's
 * `userScope` (required). Another scope's id answers exactly as a missing one: 404
 * `not_found` for a read, `{memories: 0, removed: 0}` for a forget.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { z } from "zod";
import { InvalidInputError, invalidFromZod, PromptctxError } from "../errors/index.js";
import type { ForgetTarget, MemoryStore } from "../store/index.js";
import {
  ApproveRequestSchema,
  ForgetRequestSchema,
  ListMemoriesQuerySchema,
  MemoryQuerySchema,
} from "./memory-manage-schema.js";
import type { MemoryRouteContext } from "./memory-routes.js";
import { NoStoreError } from "./memory-routes.js";

/** No memory of that id in the scope (404; the same for an id of another scope). */
export class MemoryNotFoundError extends PromptctxError {
  constructor() {
    super("not_found", "no such memory in this scope", "memoryId");
    this.name = "MemoryNotFoundError";
  }
}

function parse<T extends z.ZodType>(schema: T, value: unknown, prefix: string[]): z.output<T> {
  const r = schema.safeParse(value ?? {});
  if (!r.success) throw invalidFromZod(r.error, prefix);
  return r.data;
}

/** The request's scope: the token's, else the one it names (required). */
function scopeOf(
  ctx: MemoryRouteContext,
  request: FastifyRequest,
  named: string | undefined,
  where: string,
): string {
  const { scope } = ctx.principal(request);
  if (scope !== null) return scope;
  if (named === undefined)
    throw new InvalidInputError(`${where}userScope is required`, "userScope");
  return named;
}

function storeOf(ctx: MemoryRouteContext): MemoryStore {
  const store = ctx.store();
  if (store === null) throw new NoStoreError();
  return store;
}

/** The `{memoryId}` path parameter (URL-decoded by the router). */
function idOf(request: FastifyRequest): string {
  const id = (request.params as { memoryId?: string }).memoryId ?? "";
  if (id.trim() === "") throw new InvalidInputError("memoryId must not be blank", "memoryId");
  return id;
}

/** Registers the memory management routes (see the module notes). */
export function registerMemoryManageRoutes(app: FastifyInstance, ctx: MemoryRouteContext): void {
  app.get("/v1/memories", async (request) => {
    const q = parse(ListMemoriesQuerySchema, request.query, []);
    const userScope = scopeOf(ctx, request, q.userScope, "");
    const page = await storeOf(ctx).listEntries({
      userScope,
      ...(q.status === undefined ? {} : { status: q.status }),
      ...(q.limit === undefined ? {} : { limit: q.limit }),
      ...(q.after === undefined ? {} : { after: q.after }),
      ...(q.kinds === undefined ? {} : { kinds: q.kinds }),
      ...(q.categories === undefined ? {} : { categories: q.categories }),
    });
    return { userScope, ...page };
  });

  app.get("/v1/memories/:memoryId", async (request) => {
    const q = parse(MemoryQuerySchema, request.query, []);
    const userScope = scopeOf(ctx, request, q.userScope, "");
    const entry = await storeOf(ctx).getEntry(idOf(request), { userScope });
    if (entry === null) throw new MemoryNotFoundError();
    return entry;
  });

  app.get("/v1/memories/:memoryId/history", async (request) => {
    const q = parse(MemoryQuerySchema, request.query, []);
    const userScope = scopeOf(ctx, request, q.userScope, "");
    const memoryId = idOf(request);
    const versions = await storeOf(ctx).history(memoryId, { userScope });
    if (versions.length === 0) throw new MemoryNotFoundError();
    return { memoryId, userScope, versions };
  });

  app.post("/v1/memories/:memoryId/approve", async (request) => {
    const b = parse(ApproveRequestSchema, request.body, []);
    const userScope = scopeOf(ctx, request, b.userScope, "");
    const entry = await storeOf(ctx).approve(idOf(request), { userScope });
    if (entry === null) throw new MemoryNotFoundError();
    return entry;
  });

  app.delete("/v1/memories/:memoryId", async (request) => {
    const q = parse(MemoryQuerySchema, request.query, []);
    const userScope = scopeOf(ctx, request, q.userScope, "");
    const result = await storeOf(ctx).forget({ userScope, memoryId: idOf(request) });
    return { userScope, ...result };
  });

  app.post("/v1/memories/forget", async (request) => {
    const b = parse(ForgetRequestSchema, request.body, []);
    const userScope = scopeOf(ctx, request, b.userScope, "");
    if ((b.memoryId === undefined) === (b.all === undefined)) {
      throw new InvalidInputError("give memoryId or all: true (not both)", "memoryId");
    }
    if (b.memoryId !== undefined && (b.kinds !== undefined || b.categories !== undefined)) {
      throw new InvalidInputError(
        "kinds and categories go with all: true",
        b.kinds !== undefined ? "kinds" : "categories",
      );
    }
    const target: ForgetTarget =
      b.memoryId !== undefined
        ? { userScope, memoryId: b.memoryId }
        : {
            userScope,
            all: true,
            ...(b.kinds === undefined ? {} : { kinds: b.kinds }),
            ...(b.categories === undefined ? {} : { categories: b.categories }),
          };
    const result = await storeOf(ctx).forget(target);
    return { userScope, ...result };
  });
}
