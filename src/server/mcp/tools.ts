/**
 * What the MCP tools do, as plain functions of the session's context and their checked
 * arguments (schemas.ts) returning plain JSON: `recall` (hits with why each was found,
 * its scores and the selection gates' decision), `remember` (one memory through the
 * store's write path), `assemble_context` (the workspace's system prompt and a short
 * manifest). The SDK wiring is in server.ts.
 */
import { relative } from "node:path";
import { PromptctxError } from "../../errors/index.js";
import type { MemoryDecision } from "../../memory/index.js";
import {
  candidatesFromRecallHits,
  DEFAULT_POLICY,
  selectMemoryContext,
} from "../../memory/index.js";
import {
  type AddResult,
  adapterOptionsFromHits,
  derivedMemoryId,
  type MemoryRecordInput,
  type MemoryStore,
  recallHints,
  type StoreRecallHit,
} from "../../store/index.js";
import { type AssemblyManifest, deterministicView } from "../../trace/index.js";
import { resolveWorkspace } from "../assemble-route.js";
import { NoStoreError } from "../memory/routes.js";
import type { McpContext } from "./context.js";
import type { AssembleArgs, ForgetArgs, RecallArgs, RememberArgs } from "./schemas.js";

/** Hits `recall` returns without a `limit`. */
export const DEFAULT_RECALL_LIMIT = 10;
/** The most entries of `dropped` in `assemble_context`'s short manifest. */
export const MAX_DROPPED_SHOWN = 50;

/**
 * The session's store, or the `store_not_configured` error.
 *
 * @example await storeOf(ctx).count({ userScope: ctx.scope })
 */
export function storeOf(ctx: McpContext): MemoryStore {
  const store = ctx.store();
  if (store === null) throw new NoStoreError();
  return store;
}

/** The selection gate's verdict on one hit. */
function gateOf(d: MemoryDecision | undefined) {
  if (d === undefined) return null;
  return {
    status: d.status,
    reason: d.reason,
    detail: d.detail,
    relatedMemoryId: d.relatedMemoryId,
  };
}

/** One hit as `recall` explains it. */
function explainedHit(h: StoreRecallHit, decision: MemoryDecision | undefined) {
  const s = h.scoreBreakdown;
  return {
    memoryId: h.memoryId,
    rank: h.rank,
    content: h.snippet,
    kind: h.kind,
    category: h.category,
    tags: h.tags,
    importance: h.importance,
    conflictKey: h.conflictKey,
    authority: h.authority,
    provenance: h.provenance,
    why: { matchedTerms: s.matchedTerms, coverage: s.coverage },
    scores: {
      total: s.total,
      lexical: s.lexical,
      recency: s.recency,
      importance: s.importance,
      salience: s.salience,
      bm25: s.bm25,
      weights: s.weights,
    },
    gate: gateOf(decision),
  };
}

/**
 * `recall`: the scope's hits for a query, best first, each with the query terms it
 * contains, its score breakdown and what the default selection policy
 * (docs/memory-selection.md) decided for it: selected, or rejected with a reason code.
 *
 * @example await recallTool(ctx, { query: "test framework" })
 */
export async function recallTool(ctx: McpContext, args: RecallArgs) {
  const store = storeOf(ctx);
  const asOf = args.now ?? ctx.clock().toISOString();
  const hits = await store.recall(args.query, {
    userScope: ctx.scope,
    asOf,
    limit: args.limit ?? DEFAULT_RECALL_LIMIT,
    ...(args.categories !== undefined ? { categories: args.categories } : {}),
  });
  const plan = selectMemoryContext(
    {
      userScope: ctx.scope,
      policy: DEFAULT_POLICY,
      tokenizer: "estimate",
      candidates: candidatesFromRecallHits(hits, adapterOptionsFromHits(hits)),
    },
    { tokenCounter: ctx.counters().get("estimate") },
  );
  const byId = new Map(plan.decisions.map((d) => [d.memoryId, d]));
  return {
    query: args.query,
    asOf,
    policy: plan.policy,
    hits: hits.map((h) => explainedHit(h, byId.get(h.memoryId))),
    selectedMemoryIds: plan.selectedMemoryIds,
    hints: recallHints(args.query, store),
  };
}

/**
 * `remember`: writes one memory in the session's scope through the store's `add` (its
 * validation and rules), then reads it back.
 *
 * @example await rememberTool(ctx, { content: "Prefers pytest over unittest" })
 */
export async function rememberTool(ctx: McpContext, args: RememberArgs) {
  const store = storeOf(ctx);
  const now = args.now ?? ctx.clock().toISOString();
  const memoryId = args.memoryId ?? derivedMemoryId(ctx.scope, args.content, now);
  const record: MemoryRecordInput = {
    memoryId,
    userScope: ctx.scope,
    content: args.content,
    source: {
      sourceId: "mcp",
      sourceType: "mcp",
      title: "promptctx mcp remember",
      capturedAt: now,
    },
    storedAt: now,
    ...(args.kind !== undefined ? { kind: args.kind } : {}),
    ...(args.category !== undefined ? { category: args.category } : {}),
    ...(args.tags !== undefined ? { tags: args.tags } : {}),
    ...(args.summary !== undefined ? { summary: args.summary } : {}),
    ...(args.importance !== undefined ? { importance: args.importance } : {}),
    ...(args.conflictKey !== undefined ? { conflictKey: args.conflictKey } : {}),
    ...(args.authority !== undefined ? { authority: args.authority } : {}),
  };
  let result: AddResult;
  try {
    result = await store.add([record]);
  } catch (err) {
    throw asArgumentError(err);
  }
  const held = result.quarantined?.find((q) => q.memoryId === memoryId);
  return {
    memoryId,
    status: result.inserted > 0 ? "inserted" : "updated",
    // The takeover gate's hold: stored, never recalled until the user approves it.
    quarantined: held === undefined ? null : { rule: held.rule },
    record: await store.get(memoryId, { userScope: ctx.scope }),
  };
}

/**
 * A store error about the one record `remember` wrote, at the argument's path
 * (`records[0].content` → `content`; the whole record → no path).
 */
function asArgumentError(err: unknown): unknown {
  if (!(err instanceof PromptctxError) || err.path === null) return err;
  const m = /^records\[0\](?:\.(.*))?$/.exec(err.path);
  if (m === null) return err;
  const path = m[1] ?? null;
  const message = err.message.replace(
    /^records\[0\]\.?([^:]*): /,
    path === null ? "" : `${path}: `,
  );
  return new PromptctxError(err.code, message, path);
}

/**
 * `forget`: erases one memory of the session's scope, every version of it. Another
 * scope's id answers exactly as a missing one (`forgotten: false`).
 *
 * @example await forgetTool(ctx, { memoryId: "mem-1f2e3d4c5b6a7988" })
 */
export async function forgetTool(ctx: McpContext, args: ForgetArgs) {
  const result = await storeOf(ctx).forget({ userScope: ctx.scope, memoryId: args.memoryId });
  return { memoryId: args.memoryId, forgotten: result.memories > 0, removed: result.removed };
}

/** A dropped layer or a rejected item, as the short manifest lists it. */
interface Dropped {
  layer: string;
  item: string | null;
  reason: string;
  detail: string;
}

function droppedOf(manifest: AssemblyManifest): Dropped[] {
  const out: Dropped[] = [];
  for (const l of manifest.layers) {
    if (l.status === "dropped" || l.status === "skipped") {
      out.push({ layer: l.id, item: null, reason: l.reason, detail: l.detail });
    }
    for (const i of l.items) {
      if (i.status === "rejected")
        out.push({ layer: l.id, item: i.id, reason: i.reason, detail: i.detail });
    }
  }
  return out;
}

/**
 * The manifest in short: budgets, each layer's status, use and reason, and what was left
 * out (whole layers and single items) with its reason code. The whole manifest is the
 * `manifest://last` resource.
 *
 * @example shortManifest(assembly.manifest).dropped
 */
export function shortManifest(manifest: AssemblyManifest) {
  const dropped = droppedOf(manifest);
  return {
    promptVersion: manifest.promptVersion,
    mode: manifest.mode,
    tokenizer: manifest.tokenizer,
    now: manifest.now,
    budget: manifest.budget,
    used: manifest.used,
    layers: manifest.layers.map((l) => ({
      id: l.id,
      status: l.status,
      reason: l.reason,
      budget: l.budget,
      used: l.used,
    })),
    dropped: dropped.slice(0, MAX_DROPPED_SHOWN),
    droppedTotal: dropped.length,
    failures: manifest.failures,
    ...(manifest.hints === undefined ? {} : { hints: manifest.hints }),
  };
}

/**
 * `assemble_context`: the system prompt of a workspace inside the root for a query, in
 * the session's scope, and its short manifest; the whole manifest becomes the scope's
 * `manifest://last`.
 *
 * @example await assembleTool(ctx, { query: "add an index on invoices.created_at" })
 */
export async function assembleTool(ctx: McpContext, args: AssembleArgs) {
  const arrivedAt = ctx.workspaces.arrival();
  const workspace = await resolveWorkspace(ctx.root, args.workspace);
  const now = args.now ?? ctx.clock().toISOString();
  const name = args.tokenizer ?? (await ctx.workspaces.config(workspace, arrivedAt)).tokenizer;
  const tokenCounter = ctx.counters().forRequest(name);
  const out = await ctx.workspaces.assemble(workspace, {
    arrivedAt,
    query: args.query,
    now,
    user: ctx.scope,
    ...(tokenCounter !== undefined ? { tokenCounter } : {}),
    ...(args.tokenizer !== undefined ? { tokenizer: args.tokenizer } : {}),
    ...(args.mode !== undefined ? { mode: args.mode } : {}),
    ...(args.budgetChars !== undefined ? { budgetChars: args.budgetChars } : {}),
    ...(args.budgetTokens !== undefined ? { budgetTokens: args.budgetTokens } : {}),
    ...(args.renderer !== undefined ? { renderer: args.renderer } : {}),
  });
  const where = relative(ctx.root, workspace) || ".";
  ctx.manifests.set(ctx.scope, {
    query: args.query,
    now,
    workspace: where,
    manifest: deterministicView(out.manifest),
  });
  return { workspace: where, prompt: out.prompt, manifest: shortManifest(out.manifest) };
}
