/**
 * The inspector's routes on the service's Fastify app: `GET /` and `GET /inspect` (the page),
 * `GET /inspect/assets/NAME` (its script and style, bundled at build time),
 * `GET /inspect/data` and `GET /inspect/diff?a=&b=`. Nothing is fetched from elsewhere:
 * the page's content security policy allows only this origin.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { invalidFromZod, PromptctxError } from "../../errors/index.js";
import { rejectUnknownFields } from "../../text/index.js";
import { UnauthorizedError } from "../auth.js";
import { type InspectSource, inspectData, inspectDiff } from "./data.js";

/** Where the build puts the page: `dist/server/inspector/` (from `src/server/inspector/`). */
export const INSPECTOR_ASSETS = fileURLToPath(new URL("../inspector/", import.meta.url));

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
};

const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'",
  "x-content-type-options": "nosniff",
  "cache-control": "no-store",
};

const DiffQuerySchema = z.object({
  a: z.coerce.number().int().min(1),
  b: z.coerce.number().int().min(1),
});

/** The page's files by name: the HTML, and every script and style next to it. */
function loadAssets(dir: string): Map<string, string> {
  const assets = new Map<string, string>();
  if (!existsSync(dir)) return assets;
  for (const name of readdirSync(dir)) {
    if (name === "index.html" || CONTENT_TYPES[extname(name)] !== undefined) {
      assets.set(name, readFileSync(join(dir, name), "utf8"));
    }
  }
  return assets;
}

function notFound(message: string): PromptctxError {
  return new PromptctxError("not_found", message);
}

function send(reply: FastifyReply, type: string, body: string): FastifyReply {
  return reply.headers(SECURITY_HEADERS).type(type).send(body);
}

/**
 * Registers the inspector's routes. `source` gives the turns (null: the page says there
 * is nothing to show and `/inspect/data` answers 404). `mayRead` says whether a request
 * may read them (the service: not with a token bound to one scope, since a recording
 * holds every scope's prompts; 401 otherwise).
 */
export function registerInspectRoutes(
  app: FastifyInstance,
  source: InspectSource | null,
  assetsDir: string = INSPECTOR_ASSETS,
  mayRead: (request: FastifyRequest) => boolean = () => true,
): void {
  const assets = loadAssets(assetsDir);
  const load = async (request: FastifyRequest) => {
    if (!mayRead(request)) {
      throw new UnauthorizedError("a token bound to one scope cannot read the recording");
    }
    if (source === null) {
      throw notFound("nothing to inspect: run `promptctx inspect FILE` or `serve --record FILE`");
    }
    return source.load();
  };

  const page = async (_request: FastifyRequest, reply: FastifyReply) => {
    const html = assets.get("index.html");
    if (html === undefined) throw notFound("the inspector page is not built (npm run build)");
    return send(reply, "text/html; charset=utf-8", html);
  };
  app.get("/", page);
  app.get("/inspect", page);

  app.get<{ Params: { name: string } }>("/inspect/assets/:name", async (request, reply) => {
    const { name } = request.params;
    const body = name === "index.html" ? undefined : assets.get(name);
    if (body === undefined) throw notFound(`no inspector asset ${name}`);
    return send(reply, CONTENT_TYPES[extname(name)] as string, body);
  });

  app.get("/inspect/data", async (request, reply) => {
    const data = inspectData(source?.title ?? "", await load(request));
    return send(reply, "application/json; charset=utf-8", JSON.stringify(data));
  });

  app.get("/inspect/diff", async (request, reply) => {
    // A typo in a query parameter (`?a=1&bb=2`) is bad input, as an unknown body field is.
    rejectUnknownFields(DiffQuerySchema, request.query);
    const parsed = DiffQuerySchema.safeParse(request.query);
    if (!parsed.success) throw invalidFromZod(parsed.error);
    const diff = inspectDiff(await load(request), parsed.data.a, parsed.data.b);
    return send(reply, "application/json; charset=utf-8", JSON.stringify(diff));
  });
}
