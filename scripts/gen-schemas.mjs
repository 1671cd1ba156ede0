// Writes the published JSON schemas generated from the zod schemas (the single source).
import { writeFileSync } from "node:fs";
import { workspaceConfigJsonSchema } from "../dist/workspace/index.js";

const out = new URL("../schemas/workspace-config.schema.json", import.meta.url);
writeFileSync(out, `${JSON.stringify(workspaceConfigJsonSchema(), null, 2)}\n`);
console.log(`wrote ${out.pathname}`);
