#!/usr/bin/env node
// The compiled CLI (npm ci runs the build through the `prepare` script).
import("../dist/cli/main.js")
  .then((m) => m.main(process.argv))
  .catch((err) => {
    if (err && err.code === "ERR_MODULE_NOT_FOUND") {
      process.stderr.write("promptctx: not built yet; run `npm run build` first\n");
      process.exit(1);
    }
    throw err;
  });
