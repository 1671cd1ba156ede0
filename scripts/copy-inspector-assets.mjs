// Build step: copies the inspector page's HTML and CSS next to its compiled scripts
// (src/server/inspector → dist/server/inspector), so the package serves them offline.
import { copyFileSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const from = join(root, "src/server/inspector");
const to = join(root, "dist/server/inspector");
mkdirSync(to, { recursive: true });
for (const name of readdirSync(from)) {
  if (name.endsWith(".html") || name.endsWith(".css"))
    copyFileSync(join(from, name), join(to, name));
}
