/**
 * What `bin/promptctx.js` runs (bundled itself, as dist/bundle/launch.cjs): the bundled
 * CLI (dist/bundle/, built by scripts/bundle-cli.mjs from the compiled dist/cli/main.js),
 * CommonJS chunks compiled with the V8 code cache the build wrote next to each
 * (`CHUNK.cache`), so a process neither resolves some 230 modules nor parses and compiles
 * most of the code it runs. A cache V8 rejects (another Node version, other V8 flags) or a
 * missing one is ignored: the chunk then compiles from its source. Each verb stays a chunk
 * of its own, loaded only when it runs. This module imports nothing but Node built-ins.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Script } from "node:vm";

/** The bundle of the installed package. */
export const BUNDLE_DIR = fileURLToPath(new URL("../bundle/", import.meta.url));

/** The bundle's entry chunk: dist/cli/main.js and what it imports statically. */
export const BUNDLE_ENTRY = "main.cjs";

/** One chunk a process loaded. */
export interface ChunkLoad {
  /** Its file name in the bundle directory. */
  name: string;
  /** `accepted`: compiled from the code cache; `rejected` by V8; `none`: no cache file. */
  cache: "accepted" | "rejected" | "none";
}

/** The bundled CLI, loaded. */
export interface Bundle {
  /** `main` of src/cli/main.ts. */
  main(argv: string[]): Promise<void>;
  /** The chunks loaded so far, in load order. */
  readonly loaded: readonly ChunkLoad[];
  /**
   * Writes each chunk's code cache next to it: for the chunks loaded so far, with the code
   * they ran (the build's warm run); `others` are compiled only, for their top level.
   */
  writeCodeCache(others: readonly string[]): void;
}

interface CjsModule {
  exports: Record<string, unknown>;
}

type ChunkFunction = (
  exports: CjsModule["exports"],
  require: NodeJS.Require,
  module: CjsModule,
  filename: string,
  dirname: string,
  importModule: (specifier: string) => Promise<unknown>,
) => void;

// The wrapper Node's own CommonJS loader uses (a chunk sees the same five names), plus the
// `import()` of external packages (a provider SDK): the build rewrote each to a call of
// `__promptctxImport`, since a script compiled from a code cache has no dynamic import.
const wrap = (source: string): string =>
  `(function (exports, require, module, __filename, __dirname, __promptctxImport) { ${source}\n});`;

// An ES module's import(): the specifier resolves from dist/, as from the chunk.
const importModule = (specifier: string): Promise<unknown> => import(specifier);

function compile(file: string, cachedData: Buffer | undefined): Script {
  return new Script(wrap(readFileSync(file, "utf8")), {
    filename: file,
    ...(cachedData !== undefined ? { cachedData } : {}),
  });
}

function readCache(file: string): Buffer | undefined {
  try {
    return readFileSync(`${file}.cache`);
  } catch {
    return undefined;
  }
}

/**
 * Loads the bundle in `dir` (its entry chunk and, as they are required, the others), with
 * the code caches unless `useCache` is false (the build's warm run, which writes them).
 *
 * @example const { main } = loadBundle(BUNDLE_DIR); await main(process.argv);
 */
export function loadBundle(dir: string, useCache = true): Bundle {
  const modules = new Map<string, CjsModule>();
  const scripts = new Map<string, Script>();
  const loaded: ChunkLoad[] = [];

  function load(name: string): CjsModule["exports"] {
    const known = modules.get(name);
    if (known !== undefined) return known.exports;
    const file = join(dir, name);
    const cachedData = useCache ? readCache(file) : undefined;
    const script = compile(file, cachedData);
    const cache =
      cachedData === undefined ? "none" : script.cachedDataRejected ? "rejected" : "accepted";
    const module: CjsModule = { exports: {} };
    modules.set(name, module);
    scripts.set(name, script);
    loaded.push({ name, cache });
    const own = createRequire(file);
    // A chunk requires its siblings as `./NAME.cjs`; everything else is Node's to resolve.
    const require = ((id: string) =>
      id.startsWith("./") ? load(id.slice(2)) : own(id)) as NodeJS.Require;
    Object.assign(require, { resolve: own.resolve, cache: own.cache, main: own.main });
    (script.runInThisContext() as ChunkFunction)(
      module.exports,
      require,
      module,
      file,
      dirname(file),
      importModule,
    );
    return module.exports;
  }

  const entry = load(BUNDLE_ENTRY) as { main: Bundle["main"] };
  return {
    main: (argv) => entry.main(argv),
    loaded,
    writeCodeCache(others) {
      for (const [name, script] of scripts)
        writeFileSync(join(dir, `${name}.cache`), script.createCachedData());
      for (const name of others.filter((n) => !scripts.has(n))) {
        const file = join(dir, name);
        writeFileSync(`${file}.cache`, compile(file, undefined).createCachedData());
      }
    },
  };
}

/** Where a process that ran the bundle lists what it loaded (for tests and diagnosis). */
export const LOADED_KEY = Symbol.for("promptctx.bundle.loaded");

/**
 * Runs the CLI from the bundle with `argv` (as in `process.argv`); what bin/promptctx.js does.
 */
export function launch(argv: string[]): Promise<void> {
  const bundle = loadBundle(BUNDLE_DIR);
  (globalThis as Record<symbol, unknown>)[LOADED_KEY] = bundle.loaded;
  return bundle.main(argv);
}
