import { it } from "vitest";
import { assemble } from "../../src/assemble/index.js";
import { reactInput } from "./helpers.js";

it("probe", async () => {
  for (const r of ["en", "zh-CN", "tagged"]) {
    const a = await assemble(reactInput(undefined, { renderer: r }));
    console.log(JSON.stringify(a.prompt));
    console.log(a.prompt);
    console.log(
      JSON.stringify(
        a.manifest.layers.map((l) => [
          l.id,
          l.status,
          l.reason,
          l.used,
          l.items.map((i) => [i.id, i.reason, i.detail]),
        ]),
      ),
    );
  }
});
