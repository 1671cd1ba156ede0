import { spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { ChunkLoad } from "../../src/cli/launch.js";
import { BIN } from "./run-cli.js";

// What `npm run build` makes and bin/promptctx.js runs (scripts/bundle-cli.mjs).
const BUNDLE = fileURLToPath(new URL("../../dist/bundle/", import.meta.url));
const LAUNCH = fileURLToPath(new URL("../../dist/cli/launch.js", import.meta.url));
const WORKSPACE = fileURLToPath(new URL("../../examples/workspace", import.meta.url));

// Prints, at exit, the chunks the process loaded (src/cli/launch.ts records them).
const SHOW_LOADED = `data:text/javascript,${encodeURIComponent(
  `process.on("exit", () => process.stderr.write("\\nLOADED " + JSON.stringify(globalThis[Symbol.for("promptctx.bundle.loaded")] ?? null)));`,
)}`;

// Node flags from the environment would make V8 refuse the caches: the child runs without.
function cleanEnv(): Record<string, string> {
  const { NODE_OPTIONS: _, ...env } = process.env as Record<string, string>;
  return env;
}

function run(args: string[]): { code: number | null; stdout: string; loaded: ChunkLoad[] } {
  const r = spawnSync(process.execPath, ["--import", SHOW_LOADED, BIN, ...args], {
    encoding: "utf8",
    env: cleanEnv(),
  });
  const line = r.stderr.slice(r.stderr.lastIndexOf("\nLOADED ") + "\nLOADED ".length);
  return { code: r.status, stdout: r.stdout, loaded: JSON.parse(line) ?? [] };
}

// Prints, at exit, how many modules of the encoder (tfjs, its weights package) the process required.
const SHOW_ENCODER = `data:text/javascript,${encodeURIComponent(
  `import { createRequire } from "node:module"; const req = createRequire(process.cwd() + "/"); process.on("exit", () => process.stderr.write("\\nENCODER " + JSON.stringify(Object.keys(req.cache).filter((k) => /@tensorflow|@energetic-ai/.test(k)).length)));`,
)}`;

/** How many modules of the encoder `args` loaded. */
function encoderModules(args: string[], cwd?: string): number {
  const r = spawnSync(process.execPath, ["--import", SHOW_ENCODER, BIN, ...args], {
    encoding: "utf8",
    env: cleanEnv(),
    ...(cwd === undefined ? {} : { cwd }),
  });
  return Number(r.stderr.slice(r.stderr.lastIndexOf("\nENCODER ") + "\nENCODER ".length));
}

const ASSEMBLE = [
  "assemble",
  "--workspace",
  WORKSPACE,
  "--query",
  "add an index on invoices.created_at in a new migration",
  "--now",
  "2026-11-30T09:00:00Z",
  "--tokenizer",
  "estimate",
  "--no-user-files",
];

// A verb's own module, as a chunk name (src/cli/registry.ts loads these).
const VERB_CHUNK = /^(assemble-cmd|serve-cmd|replay-cmd|inspect-cmd|check-draft-cmd|command)-/;

describe("the bundled CLI", () => {
  it("is what bin/promptctx.js runs, every chunk from its code cache", () => {
    const r = run(["--help"]);
    expect(r.code).toBe(0);
    expect(r.loaded[0]?.name).toBe("main.cjs");
    const names = readdirSync(BUNDLE);
    for (const chunk of r.loaded) {
      expect(names).toContain(chunk.name);
      expect(chunk.cache, chunk.name).toBe("accepted");
    }
  });

  it("--help loads no verb's chunk; assemble loads its own and no store", () => {
    const help = run(["--help"]).loaded.map((c) => c.name);
    expect(help.filter((n) => VERB_CHUNK.test(n))).toEqual([]);
    // Nor the schemas' library: what every command line loads stays small.
    expect(help.filter((n) => n.startsWith("zod-"))).toEqual([]);
    const assemble = run(ASSEMBLE);
    expect(assemble.code).toBe(0);
    const names = assemble.loaded.map((c) => c.name);
    expect(names.filter((n) => VERB_CHUNK.test(n))).toEqual([
      expect.stringMatching(/^assemble-cmd-/),
    ]);
    // The example workspace has no memory store: the store's code (and pg, SQLite) stays unloaded.
    expect(names.filter((n) => n.startsWith("store-"))).toEqual([]);
    expect(assemble.stdout).toContain("Prompt\n======");
  });

  it("the sentence encoder is loaded only by verbs that recall or write memories", () => {
    expect(encoderModules(["--help"])).toBe(0);
    expect(encoderModules(["memory", "--help"])).toBe(0);
    expect(encoderModules(ASSEMBLE)).toBe(0);
    const dir = mkdtempSync(join(tmpdir(), "promptctx-encoder-"));
    try {
      const recall = [
        "memory",
        "recall",
        "--user",
        "u",
        "--query",
        "dark theme",
        "--now",
        "2026-11-30T09:00:00Z",
      ];
      writeFileSync(join(dir, "m.jsonl"), "");
      expect(encoderModules(["memory", "import", "m.jsonl"], dir)).toBeGreaterThan(0);
      expect(encoderModules(["memory", "export"], dir)).toBe(0);
      expect(encoderModules(recall, dir)).toBeGreaterThan(0);
      expect(encoderModules([...recall, "--embedder", "none"], dir)).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("each module that reads its own URL sees its dist/ file's (package.json, assets, examples)", () => {
    const urls = readdirSync(BUNDLE)
      .filter((n) => n.endsWith(".cjs"))
      .flatMap((n) => [
        ...readFileSync(join(BUNDLE, n), "utf8").matchAll(
          /new URL\("([^"]+)", require\("url"\)\.pathToFileURL\(__filename\)\.href\)/g,
        ),
      ])
      .map((m) => m[1] as string);
    expect(urls).toEqual(
      expect.arrayContaining(["../server/meta-routes.js", "../cli/assembly.js"]),
    );
    for (const url of urls) expect(existsSync(join(BUNDLE, url)), url).toBe(true);
    // No import.meta.url of ours is left to name a chunk instead.
    for (const n of readdirSync(BUNDLE).filter((f) => f.endsWith(".cjs"))) {
      const text = readFileSync(join(BUNDLE, n), "utf8");
      const own = text.match(/require\("url"\)\.pathToFileURL\(__filename\)/g)?.length ?? 0;
      const wrapped =
        text.match(/new URL\("[^"]+", require\("url"\)\.pathToFileURL\(__filename\)/g)?.length ?? 0;
      expect(own, n).toBe(wrapped);
    }
  });
});

describe("loadBundle", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  // The bundle copied elsewhere, its entry's cache replaced (garbage) and another's removed.
  function damagedCopy(): string {
    const dir = mkdtempSync(join(tmpdir(), "promptctx-bundle-"));
    dirs.push(dir);
    cpSync(BUNDLE, dir, { recursive: true });
    writeFileSync(join(dir, "main.cjs.cache"), "not a code cache");
    const verbs = readdirSync(dir).find((n) => n.startsWith("verbs-") && n.endsWith(".cjs"));
    rmSync(join(dir, `${verbs}.cache`));
    return dir;
  }

  it("compiles from the source when a cache is rejected or missing, with the same output", () => {
    const dir = damagedCopy();
    const script = `
      const { loadBundle } = await import(${JSON.stringify(LAUNCH)});
      const bundle = loadBundle(${JSON.stringify(dir)});
      await bundle.main(["node", "promptctx", "--help"]);
      process.stderr.write(JSON.stringify(bundle.loaded));`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
      env: cleanEnv(),
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(
      spawnSync(process.execPath, [BIN, "--help"], { encoding: "utf8" }).stdout,
    );
    const loaded = JSON.parse(r.stderr) as ChunkLoad[];
    expect(loaded.find((c) => c.name === "main.cjs")?.cache).toBe("rejected");
    expect(loaded.find((c) => c.name.startsWith("verbs-"))?.cache).toBe("none");
  });
});
