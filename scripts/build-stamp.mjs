// The build's stamp: a hash of everything `npm run build` reads (src/, the build scripts,
// the tsconfigs, package.json and the lock file), written to dist/.build-stamp when a
// build finishes.
//
//   node scripts/build-stamp.mjs write    after a build (the last step of `npm run build`)
//   node scripts/build-stamp.mjs ensure   before the tests: build only when the stamp is
//                                         missing or differs, and say so; otherwise leave
//                                         dist/ alone (a fresh `npm ci` has just built it)
//
// `prepare` is `ensure` too: `npx promptctx` in this repository "installs" the checkout into
// npm's npx cache (a link back here) and runs `prepare` on it first, so an up-to-date dist/
// must not be built again (that cost the first `npx promptctx demo` ~8 s).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, lstatSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const stampPath = join(root, "dist", ".build-stamp");
const INPUTS = [
  "src",
  "scripts/build-bpe-tables.mjs",
  "scripts/bundle-cli.mjs",
  "scripts/copy-inspector-assets.mjs",
  "tsconfig.json",
  "tsconfig.build.json",
  "tsconfig.inspector.json",
  "package.json",
  "package-lock.json",
];

function files(path) {
  if (!existsSync(path)) return [];
  if (!lstatSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => files(join(path, name)));
}

function stamp() {
  const hash = createHash("sha256");
  for (const input of INPUTS) {
    for (const file of files(join(root, input))) {
      hash.update(relative(root, file).split(sep).join("/"));
      hash.update("\0");
      hash.update(readFileSync(file));
      hash.update("\0");
    }
  }
  return hash.digest("hex");
}

const verb = process.argv[2];
if (verb === "write") {
  writeFileSync(stampPath, `${stamp()}\n`);
} else if (verb === "ensure") {
  const current = existsSync(stampPath) ? readFileSync(stampPath, "utf8").trim() : null;
  if (current === stamp()) {
    console.error("dist/ is up to date with the sources: not rebuilt");
  } else {
    console.error(
      current === null
        ? "building dist/ (no build yet)…"
        : "building dist/ (the sources changed since the last build)…",
    );
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    const run = spawnSync(npm, ["run", "build"], { cwd: root, stdio: "inherit" });
    process.exitCode = run.status ?? 1;
  }
} else {
  console.error("usage: node scripts/build-stamp.mjs write|ensure");
  process.exitCode = 2;
}
