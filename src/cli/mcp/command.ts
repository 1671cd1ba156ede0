/**
 * `promptctx mcp`: the MCP server over stdio (docs/mcp.md) for one user scope, fixed by
 * `--user`: the tools, resources and prompt of server/mcp/ over the workspace `--workspace`
 * (default: the current directory) and the memory store `--store` (default: the
 * workspace's `.promptctx/memory.db`, created when missing, as `memory add` does). Stdout
 * carries the protocol only; the server runs until the client closes stdin.
 */
import { existsSync, realpathSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { InvalidInputError, invalidFromZod } from "../../errors/index.js";
import { storedNonBlank } from "../../store/index.js";
import { collapseWs } from "../../text/index.js";
import { createCounterPool } from "../../tokens/index.js";
import { WarmWorkspaces } from "../../workspace/index.js";
import { EXIT, reportError } from "../io.js";
import { openForWrite } from "../memory/flags.js";
import { createStoreIfAbsent } from "../new-store.js";
import { type SetExit, summaryOf } from "../verbs.js";

interface McpFlags {
  user: string;
  workspace?: string;
  store?: string;
  gate?: string;
}

/** The workspace root's real path: an existing directory, else invalid input. */
function workspaceRoot(dir: string | undefined): string {
  const given = resolve(dir ?? ".");
  if (!existsSync(given) || !statSync(given).isDirectory()) {
    throw new InvalidInputError(`workspace ${given} is not a directory`, "--workspace");
  }
  return realpathSync(given);
}

/** The scope of `--user`: non-blank, well-formed text a store keeps. */
function userFlag(user: string): string {
  const r = storedNonBlank.safeParse(user);
  if (!r.success) throw invalidFromZod(r.error, ["--user"]);
  return user;
}

/** Runs the server until stdin ends; the store and the warm workspaces are closed then. */
async function runMcp(flags: McpFlags): Promise<number> {
  const scope = userFlag(flags.user);
  const root = workspaceRoot(flags.workspace);
  if (flags.store !== undefined) await createStoreIfAbsent(flags.store, "mcp");
  // The write policy is the store's, as for `memory add`: the workspace config's `memory`
  // section for the workspace's store, `--gate` over its mode.
  const store = await openForWrite({
    ...(flags.store !== undefined ? { store: flags.store } : { workspace: root }),
    ...(flags.gate !== undefined ? { gate: flags.gate } : {}),
  });
  // The SDK only now: `mcp --help` and a bad flag never load it.
  const { LastManifests, serveStdio } = await import("../../server/mcp/index.js");
  const workspaces = new WarmWorkspaces({ store });
  const counters = createCounterPool();
  try {
    await serveStdio(
      {
        scope,
        root,
        workspaces,
        store: () => store,
        clock: () => new Date(),
        counters: () => counters,
        manifests: new LastManifests(),
      },
      process.stdin,
      process.stdout,
      // Stdout is the protocol's: what went wrong with a message is said on stderr.
      (message) => process.stderr.write(`promptctx mcp: ${collapseWs(message)}\n`),
    );
  } finally {
    await workspaces.close();
    await store.close();
  }
  return EXIT.ok;
}

/** Registers `mcp` on the program. */
export function registerMcpCommand(program: Command, setExit: SetExit): void {
  program
    .command("mcp")
    .description(summaryOf("mcp"))
    .requiredOption("--user <scope>", "the user scope every tool and resource reads and writes")
    .option(
      "--workspace <dir>",
      "workspace root: assemble_context and the instruction resources read it, and workspaces named by the client stay inside it (default: the current directory)",
    )
    .option(
      "--store <path|url>",
      "memory store: an SQLite file (created when missing) or postgres://… (default: WORKSPACE/.promptctx/memory.db, created when missing)",
    )
    .option(
      "--gate <mode>",
      "takeover gate for remember: quarantine | reject | off (default: the workspace config's memory.gate, else quarantine)",
    )
    .addHelpText(
      "after",
      '\nAdd it to an MCP host (docs/mcp.md), e.g. in its JSON config:\n  {"mcpServers": {"promptctx": {"command": "npx", "args": ["promptctx", "mcp", "--user", "me", "--workspace", "/path/to/repo"]}}}\nStdout carries the protocol only; the server stops when the host closes its stdin.',
    )
    .action(async (flags: McpFlags) => {
      try {
        setExit(await runMcp(flags));
      } catch (err) {
        setExit(reportError(err, "mcp"));
      }
    });
}
