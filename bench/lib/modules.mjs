/**
 * Loading what the sections measure: promptctx's own build (dist/, emitted from src/ by
 * `npm run build`) and the peer libraries, which live in their own npm package under
 * bench/peers/ and are installed on demand (`npm ci --prefix bench/peers`). promptctx
 * itself never depends on them.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const PEERS_DIR = fileURLToPath(new URL("../peers/", import.meta.url));

/** Thrown when a dist module the section needs has not been built (yet). */
export class MissingModuleError extends Error {}

/**
 * Imports `dist/<rel>` (e.g. `memory/index.js`). A missing file is a
 * {@link MissingModuleError} naming it, so a section can say what it skipped.
 */
export async function importDist(rel) {
  const file = `${ROOT}dist/${rel}`;
  if (!existsSync(file)) {
    throw new MissingModuleError(`dist/${rel} not found (run \`npm run build\`; is src/ there?)`);
  }
  return import(pathToFileURL(file).href);
}

let peersReady = false;

const NPM = process.platform === "win32" ? "npm.cmd" : "npm";
// No install scripts are needed (priompt's tokenizer ships prebuilt binaries).
const NPM_FLAGS = ["--prefix", PEERS_DIR, "--no-audit", "--no-fund", "--ignore-scripts"];

/**
 * Installs bench/peers once with `npm ci` if its node_modules is missing, and says so.
 *
 * The lock file keeps five inert entries (`{"optional": true}`, no version) for platform
 * packages of priompt's tokenizer (@anysphere/tiktoken-node-darwin-arm64, …) that it
 * declares as optional dependencies but that were never published. npm 11.13 writes such
 * placeholders; npm ≥ 11.16 omits them and then refuses its own lock file in `npm ci`
 * ("Missing: …@ from lock file", npm/cli#9846). With the placeholders, every npm 11
 * accepts the lock. When the lock is regenerated (a peer added or bumped), keep them:
 * `npx npm@11.13.0 install --package-lock-only --prefix bench/peers` writes them again.
 */
export function ensurePeers() {
  if (peersReady) return;
  if (!existsSync(`${PEERS_DIR}node_modules`)) {
    console.log("  bench/peers/node_modules is missing: running `npm ci --prefix bench/peers`");
    const ci = spawnSync(NPM, ["ci", ...NPM_FLAGS], { encoding: "utf8" });
    if (ci.status !== 0) {
      process.stdout.write(`${ci.stdout ?? ""}${ci.stderr ?? ""}`);
      const hint = /Missing: \S+@ from lock file/.test(`${ci.stdout}${ci.stderr}`)
        ? " (the lock lost its placeholders for unpublished optional packages: see bench/lib/modules.mjs)"
        : "";
      throw new Error(`npm ci --prefix bench/peers failed (exit ${ci.status ?? ci.signal})${hint}`);
    }
  }
  peersReady = true;
}

const peerRequire = createRequire(`${PEERS_DIR}package.json`);

/** `require` of a peer package (they are CommonJS), resolved from bench/peers. */
export function requirePeer(id) {
  ensurePeers();
  return peerRequire(id);
}

/** Installed version of a peer package, read from its package.json. */
export function peerVersion(name) {
  ensurePeers();
  const pkg = JSON.parse(readFileSync(`${PEERS_DIR}node_modules/${name}/package.json`, "utf8"));
  return pkg.version;
}
