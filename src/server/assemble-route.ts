/**
 * `/v1/assemble`: the main job over a workspace inside the server's root, kept warm (read
 * once, revalidated by file signatures at each request), with the pooled counter of the
 * tokenizer it will use and the shared store, if any.
 */
import { resolve } from "node:path";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { z } from "zod";
import type { Assembly } from "../assemble/index.js";
import { InvalidInputError, invalidFromZod, toErrorObject } from "../errors/index.js";
import { confinedPath, confinedRoots } from "../files/index.js";
import { type CounterPool, tokenizerForModel } from "../tokens/index.js";
import {
  type Arrival,
  type AssembleRecordRequest,
  assembleRequestFields,
  type Recorder,
  type WarmWorkspaces,
} from "../workspace/index.js";
import type { Principal } from "./auth.js";
import { createJsonEncoder } from "./json-reply.js";
import { AssembleRequestSchema } from "./schema.js";

/** What the assemble route reads from the server. */
export interface AssembleRouteContext {
  /** The server's workspace root (real path). */
  root: string;
  counters: () => CounterPool;
  /** The warm workspaces (over the shared store, opened after the routes are registered). */
  workspaces: () => WarmWorkspaces;
  /** Who sent the request: a scoped token's scope replaces the request's `user`. */
  principal: (request: FastifyRequest) => Principal;
  /** The shared store's file, when known (a recorded request names it). */
  storePath: () => string | null;
  /** Appends each assembly (or its error) to a recording. */
  recorder: Recorder | null;
}

/**
 * The real path of a request's `workspace` (default: the root), confined to the root
 * (files/confine.ts): a missing directory and one outside are the same `path_refused`
 * answer, so a request learns nothing of what exists outside the root.
 *
 * @example await resolveWorkspace("/srv/root", "team-a") // "/srv/root/team-a"
 */
export async function resolveWorkspace(
  root: string,
  requested: string | undefined,
): Promise<string> {
  if (requested === undefined) return root;
  return confinedPath(resolve(root, requested), await confinedRoots([root]), "workspace");
}

/**
 * The recorded form of a request: the workspace's real path, the effective user scope
 * (a scoped token's) and the shared store's file.
 */
function recordRequest(
  r: z.output<typeof AssembleRequestSchema>,
  workspace: string,
  storePath: string | null,
): AssembleRecordRequest {
  return {
    workspace,
    query: r.query,
    now: r.now,
    ...assembleRequestFields(r),
    ...(r.renderer !== undefined ? { renderer: r.renderer } : {}),
    ...(storePath !== null ? { store: { path: storePath } } : {}),
  };
}

/** The content type Fastify gives a JSON answer. */
export const JSON_TYPE = "application/json; charset=utf-8";

/** Registers `/v1/assemble`. */
export function registerAssembleRoute(app: FastifyInstance, ctx: AssembleRouteContext): void {
  const json = createJsonEncoder();
  app.post("/v1/assemble", async (request, reply) => {
    const { r, workspace, workspaces, arrivedAt } = await checkedBody(ctx, request, request.body);
    const recorder = ctx.recorder;
    const recorded = recorder === null ? null : recordRequest(r, workspace, ctx.storePath());
    try {
      const out = await assembleIn(workspace, r, ctx.counters(), workspaces, arrivedAt);
      if (recorded !== null) recorder?.recordLine("assemble", recorded, out);
      const body = {
        prompt: out.prompt,
        manifest: out.manifest,
        memoryPlan: out.memoryPlan,
        segmentPlan: out.segmentPlan,
      };
      // Sent as bytes: a string answer is measured (content-length), then encoded.
      void reply.header("content-type", JSON_TYPE);
      return json.encode(body);
    } catch (err) {
      if (recorded !== null) recorder?.recordLine("assemble", recorded, toErrorObject(err));
      throw err;
    }
  });
}

/** The warm workspace's job for a checked request, with the pooled counter. */
async function assembleIn(
  workspace: string,
  r: z.output<typeof AssembleRequestSchema>,
  counters: CounterPool,
  workspaces: WarmWorkspaces,
  arrivedAt: Arrival,
): Promise<Assembly> {
  // The pooled counter for the tokenizer this assembly will use (request, else config).
  const name =
    r.model !== undefined
      ? tokenizerForModel(r.model)
      : (r.tokenizer ?? (await workspaces.config(workspace, arrivedAt)).tokenizer);
  const tokenCounter = counters.forRequest(name);
  return workspaces.assemble(workspace, {
    arrivedAt,
    query: r.query,
    now: r.now,
    ...(tokenCounter !== undefined ? { tokenCounter } : {}),
    ...(r.tokenizer !== undefined ? { tokenizer: r.tokenizer } : {}),
    ...(r.mode !== undefined ? { mode: r.mode } : {}),
    ...(r.user !== undefined ? { user: r.user } : {}),
    ...(r.budgetChars !== undefined ? { budgetChars: r.budgetChars } : {}),
    ...(r.budgetTokens !== undefined ? { budgetTokens: r.budgetTokens } : {}),
    ...(r.renderer !== undefined ? { renderer: r.renderer } : {}),
  });
}

/**
 * The assembly of a `/v1/assemble` request body (`POST /v1/request`'s workspace form of
 * `system`): validated (paths relative to the body), the scoped token's scope applied,
 * in the warm workspace.
 */
export async function assembleBody(
  ctx: AssembleRouteContext,
  request: FastifyRequest,
  raw: unknown,
): Promise<Assembly> {
  const { r, workspace, workspaces, arrivedAt } = await checkedBody(ctx, request, raw);
  return assembleIn(workspace, r, ctx.counters(), workspaces, arrivedAt);
}

/**
 * An assembly body checked once for both routes: validated, the scoped token's scope applied,
 * the workspace resolved, and the arrival taken before any await.
 */
async function checkedBody(ctx: AssembleRouteContext, request: FastifyRequest, raw: unknown) {
  // Before any await: a check of the workspace that begins after this saw every change
  // made before the request was sent (WarmWorkspaces.arrival).
  const workspaces = ctx.workspaces();
  const arrivedAt = workspaces.arrival();
  const parsed = AssembleRequestSchema.safeParse(raw);
  if (!parsed.success) throw invalidFromZod(parsed.error);
  // A scoped token's scope replaces the request's `user`: what runs, and what is recorded.
  const scope = ctx.principal(request).scope;
  const r = scope === null ? parsed.data : { ...parsed.data, user: scope };
  if (r.tokenizer !== undefined && r.model !== undefined) {
    throw new InvalidInputError("give either a tokenizer or a model, not both", "tokenizer");
  }
  const workspace = await resolveWorkspace(ctx.root, r.workspace);
  return { r, workspace, workspaces, arrivedAt };
}
