// Build step (after tsc): bundles the compiled CLI, dist/cli/main.js and everything it
// imports (zod, commander, yaml and @opentelemetry/api included), into dist/bundle/, and
// its launcher (src/cli/launch.ts) into dist/bundle/launch.cjs, which bin/promptctx.js
// runs; then writes each chunk's V8 code cache from a warm run of the CLI in a child
// process. The verbs stay chunks of their own, each loaded only when its verb runs
// (src/cli/registry.ts). The library entry (dist/index.js) is not bundled.
//
// CommonJS chunks, because Node 20 takes a code cache only for a script (vm.Script), not
// for an ES module; `strict: true` keeps the ES modules' strict mode. Kept external
// (loaded from node_modules as before): native or large packages, and those only the
// server, MCP, a provider call or an embedder uses (tfjs, the encoder's weights,
// sqlite-vec); better-sqlite3, pg and gpt-tokenizer's rank files are reached through createRequire at run time.
//
// Every bundled module of ours keeps the `import.meta.url` of its dist/ file (rewritten to
// `new URL(relative, import.meta.url)`), so what it resolves from it (package.json,
// examples/workspace, the inspector's assets, packages through createRequire) is the same.
import { spawnSync } from "node:child_process";
import { readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const dist = join(root, "dist");
const out = join(dist, "bundle");
const WARM = "--warm";
const LAUNCHER = "launch";

const EXTERNAL = [
  "better-sqlite3",
  "pg",
  "fastify",
  "@fastify/",
  "@anthropic-ai/sdk",
  "openai",
  "ai",
  "@ai-sdk/",
  "gpt-tokenizer",
  "@tensorflow/",
  "@energetic-ai/",
  "sqlite-vec",
  "@modelcontextprotocol/sdk",
];

function external(id) {
  if (id.startsWith("node:")) return true;
  return EXTERNAL.some((p) =>
    p.endsWith("/") ? id.startsWith(p) : id === p || id.startsWith(`${p}/`),
  );
}

/** Rewrites `import.meta.url` in our dist modules to the URL of the module's own file. */
const ownModuleUrl = {
  name: "own-module-url",
  transform(code, id) {
    if (!id.startsWith(dist + sep) || !code.includes("import.meta.url")) return null;
    const rel = relative(out, id).split(sep).join("/");
    return code.replaceAll(
      "import.meta.url",
      `new URL(${JSON.stringify(rel)}, import.meta.url).href`,
    );
  },
};

/**
 * Rewrites each `import(…)` left in a chunk (those of external packages: the provider
 * SDKs) to a call of `__promptctxImport`, the function dist/cli/launch.js passes each chunk:
 * V8 loses a script's dynamic-import callback when it compiles it from a code cache.
 */
function externalImports(parseAst) {
  return {
    name: "external-imports",
    renderChunk(code, chunk) {
      const starts = [];
      const walk = (node) => {
        if (node === null || typeof node !== "object") return;
        if (Array.isArray(node)) return node.forEach(walk);
        if (node.type === "ImportExpression") starts.push(node.start);
        for (const key of Object.keys(node)) walk(node[key]);
      };
      walk(parseAst(code));
      if (starts.length === 0) return null;
      let out = code;
      for (const start of starts.sort((a, b) => b - a)) {
        if (out.slice(start, start + 6) !== "import")
          throw new Error(`${chunk.fileName}: no import( at ${start}`);
        out = `${out.slice(0, start)}__promptctxImport${out.slice(start + 6)}`;
      }
      return { code: out, map: null };
    },
  };
}

const OUTPUT = { dir: out, format: "cjs", strict: true, sourcemap: false };

async function bundle() {
  const { build } = await import("rolldown");
  const { parseAst } = await import("rolldown/parseAst");
  rmSync(out, { recursive: true, force: true });
  await build({
    input: { main: join(dist, "cli/main.js") },
    platform: "node",
    external,
    plugins: [ownModuleUrl, externalImports(parseAst)],
    logLevel: "warn",
    output: { ...OUTPUT, entryFileNames: "[name].cjs", chunkFileNames: "[name]-[hash].cjs" },
  });
  // The launcher, one file that Node's own CommonJS loader runs (bin/promptctx.js requires
  // it): a CommonJS main starts faster than an ES module one.
  await build({
    input: { [LAUNCHER]: join(dist, "cli/launch.js") },
    platform: "node",
    external,
    plugins: [ownModuleUrl],
    logLevel: "warn",
    output: { ...OUTPUT, entryFileNames: "[name].cjs", codeSplitting: false },
  });
}

// The commands whose code the caches hold compiled: `--help`, and `assemble` over the
// example workspace (text and JSON, the estimate and the o200k_base counters).
const EXAMPLE = [
  "assemble",
  "--workspace",
  join(root, "examples/workspace"),
  "--query",
  "add an index on invoices.created_at in a new migration",
  "--now",
  "2026-11-30T09:00:00Z",
  "--no-user-files",
];
const WORKLOADS = [
  ["--help"],
  [...EXAMPLE, "--tokenizer", "estimate"],
  [...EXAMPLE, "--format", "json"],
];

// In the child: runs the workloads on one loaded bundle, then writes the caches.
async function warm() {
  const { loadBundle } = createRequire(import.meta.url)(join(out, `${LAUNCHER}.cjs`));
  const bundle = loadBundle(out, false);
  for (const args of WORKLOADS) {
    await bundle.main(["node", "promptctx", ...args]);
    if (process.exitCode !== 0)
      throw new Error(`promptctx ${args.join(" ")}: exit ${process.exitCode}`);
  }
  const chunks = readdirSync(out).filter((n) => n.endsWith(".cjs") && n !== `${LAUNCHER}.cjs`);
  bundle.writeCodeCache(chunks);
}

if (process.argv[2] === WARM) {
  await warm();
} else {
  await bundle();
  // A fresh process with no NODE_OPTIONS: V8 takes a cache only under the flags it was made with.
  const { NODE_OPTIONS: _, ...env } = process.env;
  const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), WARM], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`the warm run for the code cache failed:\n${r.stderr}`);
}
