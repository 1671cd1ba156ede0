#!/usr/bin/env node
// The bundled CLI (dist/bundle/, loaded by dist/cli/launch.js); npm ci builds both through
// the `prepare` script.
import("../dist/cli/launch.js")
  .then((m) => m.launch(process.argv))
  .catch((err) => {
    if (err && err.code === "ERR_MODULE_NOT_FOUND") {
      process.stderr.write("promptctx: not built yet; run `npm run build` first\n");
      process.exit(1);
    }
    throw err;
  });
