#!/usr/bin/env node
// Regenerates docs/inspector.png, the README's picture of the inspector: the committed
// example recording served by the built service on 127.0.0.1, drawn by Debian's chromium
// (playwright-core), turn 3 with its skills layer selected.
//
//   npm run screenshot:inspector        (builds first)
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { recordingSource, startServer } from "../dist/server/index.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const recording = "test/fixtures/recordings/example.jsonl";
const out = join(root, "docs/inspector.png");
const view = process.argv[2] ?? "#turn=3&view=prompt&layer=skills";

const server = await startServer({
  port: 0,
  workspace: join(root, "examples/workspace"),
  store: null,
  inspect: { title: recording, load: recordingSource(join(root, recording)).load },
});
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
});
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
  await page.goto(`${server.url}/inspect${view}`);
  await page.waitForSelector("body[data-ready]");
  await page.screenshot({ path: out });
  process.stdout.write(`wrote ${out}\n`);
} finally {
  await browser.close();
  await server.close();
}
