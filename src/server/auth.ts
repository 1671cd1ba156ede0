/**
 * Bearer tokens of the HTTP service.
 *
 * Without tokens the service is open (on its bind address, 127.0.0.1 unless told
 * otherwise) and every request names its scope in its body. With tokens, every request
 * needs `Authorization: Bearer <token>` (401 otherwise). A token is either unscoped (any
 * scope, as the body says) or bound to one scope: then the request reads and writes that
 * scope only, whatever the body says (the routes replace the body's scope with it).
 *
 * The edge (`promptctx serve`) reads the environment — `PROMPTCTX_TOKEN` (one unscoped
 * token), `PROMPTCTX_TOKENS` (`token:scope,token:scope`), `PROMPTCTX_TOKENS_FILE` (a JSON
 * object `{"token": "scope", …}`, for scopes with commas) — through {@link authFromEnv}
 * and passes the result to the server as options.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import { InvalidInputError, invalidFromZod, PromptctxError } from "../errors/index.js";
import { isWellFormedText } from "../text/index.js";

/** A token the service accepts; `scope` null = any scope. */
export interface TokenGrant {
  token: string;
  scope: string | null;
}

/** The tokens of a deployment; empty or absent = open service. */
export interface AuthOptions {
  tokens: readonly TokenGrant[];
}

/** Who sent a request: the scope its token is bound to, or null (open, or unscoped token). */
export interface Principal {
  scope: string | null;
}

const TokenSchema = z
  .string()
  .regex(/^[\x21-\x7e]+$/, "must be printable ASCII without spaces")
  .min(16, "must be at least 16 characters");
const ScopeSchema = z
  .string()
  .refine((s) => s.trim() !== "" && !s.includes("\u0000") && isWellFormedText(s), {
    message: "must be a non-blank, well-formed scope",
  });

/** {@link AuthOptions} as the server validates them (distinct tokens). */
export const AuthOptionsSchema = z
  .object({
    tokens: z.array(z.object({ token: TokenSchema, scope: ScopeSchema.nullable() })),
  })
  .superRefine((o, ctx) => {
    const seen = new Set<string>();
    o.tokens.forEach((t, i) => {
      if (seen.has(t.token)) {
        ctx.addIssue({ code: "custom", message: "token given twice", path: ["tokens", i] });
      }
      seen.add(t.token);
    });
  });

/** A request without a valid bearer token. */
export class UnauthorizedError extends PromptctxError {
  constructor(message = "missing or invalid bearer token") {
    super("unauthorized", message, "authorization");
    this.name = "UnauthorizedError";
  }
}

function pairs(value: string, name: string): TokenGrant[] {
  return value
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "")
    .map((p, i) => {
      const at = p.indexOf(":");
      if (at <= 0 || at === p.length - 1) {
        throw new InvalidInputError(`${name}[${i}] must be TOKEN:SCOPE`, `${name}[${i}]`);
      }
      return { token: p.slice(0, at), scope: p.slice(at + 1) };
    });
}

function fromFile(path: string, readFile: (path: string) => string): TokenGrant[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFile(path));
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new InvalidInputError(
      `cannot read PROMPTCTX_TOKENS_FILE: ${why}`,
      "PROMPTCTX_TOKENS_FILE",
    );
  }
  const r = z.record(z.string(), z.string()).safeParse(parsed);
  if (!r.success) throw invalidFromZod(r.error, ["PROMPTCTX_TOKENS_FILE"]);
  return Object.entries(r.data).map(([token, scope]) => ({ token, scope }));
}

/**
 * The tokens a deployment's environment configures, or undefined when it configures none
 * (open service). Called by the edge with `process.env`.
 *
 * @example authFromEnv({ PROMPTCTX_TOKENS: "0123456789abcdef:alice" })
 * // { tokens: [{ token: "0123456789abcdef", scope: "alice" }] }
 */
export function authFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  readFile: (path: string) => string,
): AuthOptions | undefined {
  const tokens: TokenGrant[] = [];
  if (env.PROMPTCTX_TOKEN) tokens.push({ token: env.PROMPTCTX_TOKEN, scope: null });
  if (env.PROMPTCTX_TOKENS) tokens.push(...pairs(env.PROMPTCTX_TOKENS, "PROMPTCTX_TOKENS"));
  if (env.PROMPTCTX_TOKENS_FILE) tokens.push(...fromFile(env.PROMPTCTX_TOKENS_FILE, readFile));
  if (tokens.length === 0) return undefined;
  const r = AuthOptionsSchema.safeParse({ tokens });
  if (!r.success) throw invalidFromZod(r.error, ["auth"]);
  return r.data;
}

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();

/** The grant whose token equals `given` (constant time per comparison), or undefined. */
function grantOf(grants: ReadonlyArray<TokenGrant & { hash: Buffer }>, given: string) {
  const h = digest(given);
  let found: TokenGrant | undefined;
  for (const g of grants) if (timingSafeEqual(g.hash, h)) found = g;
  return found;
}

/**
 * Installs the check (before the body is read) and returns how routes learn who sent a
 * request. Without tokens every request is an open one.
 */
export function registerAuth(
  app: FastifyInstance,
  auth: AuthOptions | undefined,
): (request: FastifyRequest) => Principal {
  const open: Principal = { scope: null };
  if (auth === undefined || auth.tokens.length === 0) return () => open;
  const r = AuthOptionsSchema.safeParse(auth);
  if (!r.success) throw invalidFromZod(r.error, ["auth"]);
  const grants = r.data.tokens.map((g) => ({ ...g, hash: digest(g.token) }));
  const principals = new WeakMap<FastifyRequest, Principal>();
  app.addHook("onRequest", async (request, reply) => {
    const m = /^Bearer ([\x21-\x7e]+)$/i.exec(request.headers.authorization ?? "");
    const grant = m ? grantOf(grants, m[1]!) : undefined;
    if (grant === undefined) {
      void reply.header("www-authenticate", 'Bearer realm="promptctx"');
      throw new UnauthorizedError();
    }
    principals.set(request, { scope: grant.scope });
  });
  return (request) => {
    const p = principals.get(request);
    if (p === undefined) throw new UnauthorizedError(); // never: the hook ran first
    return p;
  };
}
