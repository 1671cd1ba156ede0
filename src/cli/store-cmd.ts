/**
 * `promptctx store init ADMIN_URL`: the roles of a shared PostgreSQL memory store (see
 * docs/sources.md and docs/security.md). As an administrator, it creates (or checks) the
 * owner role and the app role, the schema, migrates the store as the owner and grants the
 * app role what it needs; it prints the URLs to use: the app role's for `serve`, the
 * owner's for `memory export`. Errors follow io.ts (exit 2 for invalid input).
 */
import type { Command } from "commander";
import { InvalidInputError } from "../errors/index.js";
import { isPostgresUrl } from "../store/index.js";
import { EXIT, reportError } from "./io.js";
import { summaryOf } from "./verbs.js";

interface InitOpts {
  owner: string;
  app: string;
  schema?: string;
  json?: boolean;
}

/**
 * `url` connecting as `role`, without a password (each role has its own credentials).
 *
 * @example roleUrl("postgres://postgres:pw@db:5432/x", "app") // "postgres://app@db:5432/x"
 */
export function roleUrl(url: string, role: string): string {
  const u = new URL(url);
  u.username = role;
  u.password = "";
  return u.toString();
}

async function runInit(adminUrl: string, opts: InitOpts): Promise<void> {
  if (!isPostgresUrl(adminUrl)) {
    throw new InvalidInputError("store init takes a postgres:// URL of an administrator", "URL");
  }
  const { initPostgresStore } = await import("../store/index.js");
  const done = await initPostgresStore(adminUrl, {
    ownerRole: opts.owner,
    appRole: opts.app,
    ...(opts.schema !== undefined ? { schema: opts.schema } : {}),
  });
  const urls = { app: roleUrl(adminUrl, done.appRole), owner: roleUrl(adminUrl, done.ownerRole) };
  if (opts.json) {
    process.stdout.write(`${JSON.stringify({ ...done, urls })}\n`);
    return;
  }
  const made = (r: string) => (done.createdRoles.includes(r) ? "created" : "existed");
  process.stdout.write(
    [
      `memory store in schema ${JSON.stringify(done.schema)} at version ${done.version}`,
      `owner role ${done.ownerRole} (${made(done.ownerRole)}): owns the tables; export and migrations`,
      `app role   ${done.appRole} (${made(done.appRole)}): serve connects as it; one scope per transaction`,
      `serve:   promptctx serve --store ${urls.app}`,
      `export:  promptctx memory export --store ${urls.owner}`,
      "(set each role's password or other authentication yourself)",
      "",
    ].join("\n"),
  );
}

/** Registers `promptctx store init`. */
export function registerStoreCommands(program: Command, setExit: (code: number) => void): void {
  const store = program.command("store").description(summaryOf("store"));
  store
    .command("init")
    .description(
      "create the owner and app roles of a PostgreSQL memory store, migrate it as the owner, grant the app role",
    )
    .argument(
      "<url>",
      "postgres:// URL of an administrator (a superuser, or a role that may create roles)",
    )
    .option(
      "--owner <role>",
      "owner role: owns the tables, runs migrations, reads every scope",
      "promptctx_owner",
    )
    .option("--app <role>", "app role: what serve connects as", "promptctx_app")
    .option("--schema <name>", "schema of the store (default: the connection's current schema)")
    .option("--json", "print {schema, ownerRole, appRole, createdRoles, version, urls}")
    .action(async (url: string, opts: InitOpts) => {
      try {
        await runInit(url, opts);
        setExit(EXIT.ok);
      } catch (err) {
        setExit(reportError(err, "store init"));
      }
    });
}
