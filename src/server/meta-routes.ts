/** The service's own routes: `/healthz` and `/openapi.json`. */
import { readFileSync } from "node:fs";
import type { FastifyInstance } from "fastify";
import { openApiDocument } from "./openapi.js";

/** The package version, for `/openapi.json`, `/healthz` and the MCP server's info. */
export function packageVersion(): string {
  try {
    const pkg = JSON.parse(
      readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
    ) as { version?: unknown };
    return typeof pkg.version === "string" ? pkg.version : "0.0.0";
  } catch {
    return "0.0.0";
  }
}

/** Registers `/healthz` (which tells whether a shared store is open) and `/openapi.json`. */
export function registerMetaRoutes(app: FastifyInstance, hasStore: () => boolean): void {
  const version = packageVersion();
  const openapi = JSON.stringify(openApiDocument(version));

  app.get("/healthz", async () => ({ status: "ok", store: hasStore() }));

  app.get("/openapi.json", async (_request, reply) => {
    void reply.type("application/json; charset=utf-8");
    return openapi;
  });
}
