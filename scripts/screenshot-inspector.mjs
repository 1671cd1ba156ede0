#!/usr/bin/env node
// Regenerates the README's pictures of the inspector: the committed example recording
// served by the built service on 127.0.0.1, drawn by Debian's chromium (playwright-core),
// turn 3 with its skills layer selected — docs/inspector.png on a desktop (1400×860) and
// docs/inspector-phone.png on a phone (390×844, the turn picker instead of the list).
//
//   npm run screenshot:inspector        (builds first)
//   npm run screenshot:inspector -- '#turn=4&view=tokens'
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { recordingSource, startServer } from "../dist/server/index.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const recording = "test/fixtures/recordings/example.jsonl";
const view = process.argv[2] ?? "#turn=3&view=prompt&layer=skills";
const shots = [
  { out: "docs/inspector.png", viewport: { width: 1400, height: 860 } },
  { out: "docs/inspector-phone.png", viewport: { width: 390, height: 844 } },
];

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
  for (const { out, viewport } of shots) {
    const page = await browser.newPage({ viewport });
    await page.goto(`${server.url}/${view}`);
    await page.waitForSelector("body[data-ready]");
    // The selected layer scrolls into view; the picture starts at the top of the page.
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(root, out) });
    process.stdout.write(`wrote ${out}\n`);
    await page.close();
  }
} finally {
  await browser.close();
  await server.close();
}
