#!/usr/bin/env node
// CommonJS (bin/package.json): a CommonJS main starts faster than an ES module one. Runs
// the bundled CLI (dist/bundle/: src/cli/launch.ts); npm ci builds it through `prepare`.
let launcher;
try {
  launcher = require("../dist/bundle/launch.cjs");
} catch (err) {
  if (err && err.code === "MODULE_NOT_FOUND" && String(err.message).includes("launch.cjs")) {
    process.stderr.write("promptctx: not built yet; run `npm run build` first\n");
    process.exit(1);
  }
  throw err;
}
launcher.launch(process.argv);
