/**
 * Rendering of a full `react` assembly (docs/assembler.md): exact prompts for the `en` and `zh-CN`
 * locales (headings, recall lines with importance and combined score, cache tiers), the
 * tagged renderer, and a caller-supplied renderer.
 */
import { describe, expect, it } from "vitest";
import { assemble } from "../../src/assemble/index.js";
import { createHeadingRenderer, LOCALES } from "../../src/render/index.js";
import { layer, reactInput } from "./helpers.js";

describe("locale rendering of a full react assembly", () => {
  it("en", async () => {
    const a = await assemble(reactInput());
    expect(a.manifest.renderer).toBe("en");
    expect(a.prompt).toBe(
      "## Constraints\n" +
        "- [warn] network needs approval\n" +
        "- [forbid] no rm -rf\n" +
        "\n<!-- cache-boundary -->\n\n" +
        "## User profile\n" +
        "- city: Beijing\n" +
        "- language: zh\n" +
        "\n<!-- cache-boundary -->\n\n" +
        "## Task plan\n" +
        "- task T-12 · in_progress · phase implement · progress 2/5\n" +
        "- next: run the migration tests (tool run_tests)\n" +
        "\n---\n\n" +
        "## Task observations\n" +
        "- migration 0042 adds a NOT NULL column\n" +
        "- tests fail in db/migrate\n" +
        "\n---\n\n" +
        "## Tools\n" +
        "- run_tests(path) — Run the test suite\n" +
        "- read_file(path)\n" +
        "- run_tests → failed: 3 failed\n" +
        "\n---\n\n" +
        "## Related memories\n" +
        "- 上次问过天气API (importance=0.70, score=0.82)\n" +
        "- prefers pytest over unittest (importance=0.50, score=0.75)",
    );
  });

  it("zh-CN", async () => {
    const a = await assemble(reactInput(undefined, { renderer: "zh-CN" }));
    expect(a.manifest.renderer).toBe("zh-CN");
    expect(a.prompt).toBe(
      "【硬性约束】\n" +
        "- [告警] network needs approval\n" +
        "- [禁止] no rm -rf\n" +
        "\n<!-- cache-boundary -->\n\n" +
        "【用户画像】\n" +
        "- city: Beijing\n" +
        "- language: zh\n" +
        "\n<!-- cache-boundary -->\n\n" +
        "【任务规划】\n" +
        "- 任务 T-12 状态=in_progress 阶段=implement\n" +
        "- 进度：第 2/5 步\n" +
        "- 下一步：调用 run the migration tests（工具=run_tests）\n" +
        "\n---\n\n" +
        "【任务观察】\n" +
        "- migration 0042 adds a NOT NULL column\n" +
        "- tests fail in db/migrate\n" +
        "\n---\n\n" +
        "【可用工具】\n" +
        "- run_tests — Run the test suite（必填 path）\n" +
        "- read_file（必填 path）\n" +
        "- 近期调用 run_tests [失败]: 3 failed\n" +
        "\n---\n\n" +
        "【相关回忆】\n" +
        "- 上次问过天气API（重要性=0.70, 综合分=0.82）\n" +
        "- prefers pytest over unittest（重要性=0.50, 综合分=0.75）",
    );
    // The spec's own example line, verbatim.
    expect(a.prompt).toContain("上次问过天气API（重要性=0.70, 综合分=0.82）");
  });

  it("the locale changes only the text, never the decisions", async () => {
    const en = await assemble(reactInput());
    const zh = await assemble(reactInput(undefined, { renderer: "zh-CN" }));
    const shape = (a: typeof en) =>
      a.manifest.layers.map((l) => [l.id, l.status, l.items.map((d) => [d.id, d.reason])]);
    expect(shape(zh)).toEqual(shape(en));
    expect(zh.memoryPlan?.selectedMemoryIds).toEqual(en.memoryPlan?.selectedMemoryIds);
  });

  it("tagged: every slot as tags, text escaped; recall as the spec 02 block", async () => {
    const a = await assemble(reactInput(undefined, { renderer: "tagged", budgetChars: 4000 }));
    expect(a.manifest.renderer).toBe("tagged");
    const [staticTier] = a.prompt.split("\n\n<!-- cache-boundary -->\n\n");
    expect(staticTier).toBe(
      "<constraints>\n" +
        '<item id="net" category="warn">[warn] network needs approval</item>\n' +
        '<item id="no-rm" category="forbid">[forbid] no rm -rf</item>\n' +
        "</constraints>",
    );
    expect(a.prompt).toContain(
      "<tool_state>\n" +
        '<item id="tool:run_tests" category="tool">run_tests(path) — Run the test suite</item>\n' +
        '<item id="tool:read_file" category="tool">read_file(path)</item>\n' +
        '<item id="call-1" category="call">run_tests → failed: 3 failed</item>\n' +
        "</tool_state>",
    );
    // Two memory hits (~230 chars each) do not fit the 200-char reference recall budget.
    const recall = layer(a.manifest.layers, "recall_memory");
    expect(recall.status).toBe("inactive");
    expect(recall.items.filter((d) => d.reason === "char_budget_exceeded")).toHaveLength(3);
  });

  it("a caller's renderer is used as given", async () => {
    const fr = createHeadingRenderer("fr", {
      ...LOCALES.en,
      headings: { constraints: "Contraintes" },
      headingFormat: "# {title}",
    });
    const a = await assemble(reactInput(undefined, { renderer: fr }));
    expect(a.manifest.renderer).toBe("fr");
    expect(a.prompt.startsWith("# Contraintes\n- [warn] network needs approval")).toBe(true);
    expect(a.prompt).toContain("# planner\n- task T-12");
  });
});
