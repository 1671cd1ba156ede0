/**
 * The command line (docs/surfaces.md): commander verbs over the library, tables for people
 * and JSON for machines, exit codes 0/1/2/3/4. The top edge: may import every stage, and
 * nothing imports it. `bin/promptctx.js` runs {@link main}.
 */
export { buildProgram, main } from "./main.js";
