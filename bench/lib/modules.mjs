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
 * Installs bench/peers once if its node_modules is missing, and says so.
 *
 * `npm ci` is tried first. npm 11 rejects this lock file when priompt's tokenizer
 * (@anysphere/tiktoken-node) declares optional platform packages that were never
 * published ("Missing: …@ from lock file", npm/cli#4828 family); then the locked
 * versions are installed with `npm install`, which keeps to the lock file.
 */
export function ensurePeers() {
  if (peersReady) return;
  if (!existsSync(`${PEERS_DIR}node_modules`)) {
    console.log("  bench/peers/node_modules is missing: running `npm ci --prefix bench/peers`");
    const ci = spawnSync(NPM, ["ci", ...NPM_FLAGS], { encoding: "utf8" });
    if (ci.status !== 0) {
      const out = `${ci.stdout ?? ""}${ci.stderr ?? ""}`;
      if (!/Missing: \S+ from lock file/.test(out)) {
        process.stdout.write(out);
        throw new Error(`npm ci --prefix bench/peers failed (exit ${ci.status ?? ci.signal})`);
      }
      const missing = [...out.matchAll(/Missing: (\S+) from lock file/g)].map((m) => m[1]);
      console.log(
        `  npm ci refused the lock file (unpublished optional packages: ${missing.join(", ")});`,
      );
      console.log("  installing the locked versions with `npm install --prefix bench/peers`");
      const lock = readFileSync(`${PEERS_DIR}package-lock.json`, "utf8");
      const inst = spawnSync(NPM, ["install", ...NPM_FLAGS], { stdio: "inherit" });
      if (inst.status !== 0) {
        throw new Error(
          `npm install --prefix bench/peers failed (exit ${inst.status ?? inst.signal})`,
        );
      }
      if (readFileSync(`${PEERS_DIR}package-lock.json`, "utf8") !== lock) {
        console.log("  warning: npm install changed bench/peers/package-lock.json");
      }
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
