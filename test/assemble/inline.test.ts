/**
 * Assembly from inline data (spec 10): the reference example byte for byte (zh-CN,
 * `priority` layout), variants of the item formats (failed call, several required args,
 * unknown level, missing next tool or step), `en` keeping today's formats, the `cache`
 * layout, the memory plan of the recall slot, and invalid input with field paths.
 */
import { describe, expect, it } from "vitest";
import { type AssembleContextRequest, assembleContext } from "../../src/assemble/index.js";
import { InvalidInputError, PromptBudgetError } from "../../src/errors/index.js";
import { cpLength } from "../../src/text/index.js";
import { parseWireContract, toWireContract } from "../../src/trace/index.js";
import { REFERENCE_PROMPT, referenceRequest } from "../fixtures/inline-context.js";

describe("spec 10: the reference example", () => {
  it("comes out byte for byte (zh-CN, priority layout, no trailing newline)", async () => {
    const a = await assembleContext(referenceRequest());
    expect(a.prompt).toBe(REFERENCE_PROMPT);
    expect(a.manifest.layout).toBe("priority");
    expect(a.manifest.renderer).toBe("zh-CN");
    expect(a.segmentPlan.separator).toBe("\n\n");
    expect(a.prompt).not.toContain("cache-boundary");
    expect(a.prompt).not.toContain("---");
  });

  it("keeps tiers and cache keys in the manifest, and the wire contract validates", async () => {
    const a = await assembleContext(referenceRequest());
    const tiers = Object.fromEntries(a.manifest.layers.map((l) => [l.id, l.cacheTier]));
    expect(tiers).toMatchObject({ constraints: "static", profile: "session", planner: "dynamic" });
    const constraints = REFERENCE_PROMPT.slice(0, REFERENCE_PROMPT.indexOf("\n\n【任务规划】"));
    expect(a.manifest.cacheKeys.static).not.toBeNull();
    expect(a.manifest.cacheKeys.session).toBeNull(); // the profile comes after dynamic slots
    expect(a.manifest.cacheKeys.dynamic).not.toBeNull();
    const again = await assembleContext({
      ...referenceRequest(),
      sources: { ...referenceRequest().sources, planner: { ...planner(), done: 3 } },
    });
    expect(again.manifest.cacheKeys.static).toBe(a.manifest.cacheKeys.static);
    expect(again.manifest.cacheKeys.dynamic).not.toBe(a.manifest.cacheKeys.dynamic);
    expect(constraints.startsWith("【硬性约束】")).toBe(true);
    const contract = toWireContract(a, {
      anchors: [{ name: "tail", atEnd: true, reserveTokens: 100 }],
      tailReserve: 100,
      contextWindow: 10_000,
      responseReserve: 0,
    });
    const plannerLayer = contract.layerManifest.find((l) => l.id === "planner");
    expect(plannerLayer?.span?.start).toBe(cpLength(constraints) + 2);
    expect(parseWireContract(JSON.stringify(contract)).assembledContext).toBe(REFERENCE_PROMPT);
  });

  it("its memory plan prices the recall line the prompt holds", async () => {
    const a = await assembleContext(referenceRequest());
    const line = "- 上次问过天气API（重要性=0.70, 综合分=0.82）";
    expect(a.memoryPlan?.context).toBe(`【相关回忆】\n${line}`);
    expect(a.memoryPlan?.decisions[0]?.candidateChars).toBe(cpLength(line));
  });
});

function planner() {
  return referenceRequest().sources.planner as NonNullable<
    ReturnType<typeof referenceRequest>["sources"]["planner"]
  >;
}

/** The reference request with `sources` patched, rendered; returns one slot's block. */
async function slot(
  patch: Partial<ReturnType<typeof referenceRequest>["sources"]>,
  heading: string,
  extra: Partial<AssembleContextRequest> = {},
): Promise<string> {
  const req = referenceRequest();
  const a = await assembleContext({ ...req, ...extra, sources: { ...req.sources, ...patch } });
  const block = a.prompt.split("\n\n").find((b) => b.startsWith(heading));
  if (block === undefined) throw new Error(`no ${heading} in ${a.prompt}`);
  return block;
}

describe("spec 10: zh-CN item variants", () => {
  it("a failed call, several required args, calls newest first", async () => {
    const tools = {
      available: [
        {
          name: "http_get",
          description: "发起 GET 请求",
          requiredArgs: ["url", "timeout", "headers"],
        },
      ],
      recentCalls: [
        { tool: "http_get", ok: true, summary: "200 OK", at: "2026-11-30T08:00:00Z" },
        { tool: "http_get", ok: false, summary: "超时", at: "2026-11-30T08:30:00Z" },
      ],
    };
    expect(await slot({ tools }, "【可用工具】")).toBe(
      "【可用工具】\n" +
        "- http_get — 发起 GET 请求（必填 url, timeout, headers）\n" +
        "- 近期调用 http_get [失败]: 超时\n" +
        "- 近期调用 http_get [成功]: 200 OK",
    );
  });

  it("an unknown level is printed as given; require is 必须", async () => {
    const constraints = [
      { id: "a", level: "audit", text: "记录每条命令" },
      { id: "b", level: "require", text: "提交前运行测试" },
    ];
    expect(await slot({ constraints }, "【硬性约束】")).toBe(
      "【硬性约束】\n- [audit] 记录每条命令\n- [必须] 提交前运行测试",
    );
  });

  it("a missing next tool, a missing next step, neither", async () => {
    const { nextTool: _t, ...stepOnly } = planner();
    expect(await slot({ planner: stepOnly }, "【任务规划】")).toBe(
      "【任务规划】\n- 任务 t-001 状态=running 阶段=executing\n- 进度：第 2/5 步\n- 下一步：weather_api",
    );
    const { nextStep: _s, ...toolOnly } = planner();
    expect(await slot({ planner: toolOnly }, "【任务规划】")).toBe(
      "【任务规划】\n- 任务 t-001 状态=running 阶段=executing\n- 进度：第 2/5 步\n- 下一步工具：http_get",
    );
    const { nextStep: _a, nextTool: _b, ...bare } = planner();
    expect(await slot({ planner: bare }, "【任务规划】")).toBe(
      "【任务规划】\n- 任务 t-001 状态=running 阶段=executing\n- 进度：第 2/5 步",
    );
  });

  it("recall without importance shows 0.50", async () => {
    const [m] = referenceRequest().sources.recall ?? [];
    const { importance: _i, ...plain } = m as NonNullable<typeof m>;
    expect(await slot({ recall: [plain] }, "【相关回忆】")).toBe(
      "【相关回忆】\n- 上次问过天气API（重要性=0.50, 综合分=0.82）",
    );
  });
});

describe("spec 10: en and the cache layout", () => {
  it("en keeps today's formats", async () => {
    const a = await assembleContext({ ...referenceRequest(), renderer: "en" });
    expect(a.prompt).toBe(
      "## Constraints\n" +
        "- [forbid] 不允许执行 rm -rf\n" +
        "- [warn] 网络访问需要审批\n" +
        "\n" +
        "## Task plan\n" +
        "- task t-001 · running · phase executing · progress 2/5\n" +
        "- next: weather_api (tool http_get)\n" +
        "\n" +
        "## Tools\n" +
        "- get_time() — 获取当前时间\n" +
        "- weather_api(city) — 查询天气\n" +
        '- weather_api → ok: {"temp":22}\n' +
        "\n" +
        "## User profile\n" +
        "- 城市: 北京\n" +
        "- 语言: 中文\n" +
        "- 用户叫张三\n" +
        "\n" +
        "## Related memories\n" +
        "- 上次问过天气API (importance=0.70, score=0.82)",
    );
  });

  it("the cache layout (default) lays tiers out with boundary markers and the 03 separator", async () => {
    const { layout: _l, ...req } = referenceRequest();
    const a = await assembleContext(req);
    expect(a.manifest.layout).toBe("cache");
    expect(
      a.prompt.startsWith(
        "【硬性约束】\n- [禁止] 不允许执行 rm -rf\n- [告警] 网络访问需要审批\n\n<!-- cache-boundary -->\n\n【用户画像】",
      ),
    ).toBe(true);
    expect(a.prompt).toContain("\n\n---\n\n【可用工具】");
    expect("separator" in a.segmentPlan).toBe(false);
  });
});

describe("spec 10: errors", () => {
  async function invalid(request: unknown, path: string) {
    let caught: unknown;
    try {
      await assembleContext(request);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(InvalidInputError);
    expect((caught as InvalidInputError).path).toBe(path);
  }

  it("invalid input names the field", async () => {
    const req = referenceRequest();
    await invalid({ ...req, query: { ...req.query, now: "yesterday" } }, "query.now");
    await invalid({ ...req, layout: "grid" }, "layout");
    await invalid({ ...req, renderer: "fr" }, "renderer");
    await invalid({ ...req, budgetChars: -1 }, "budgetChars");
    await invalid({ ...req, query: { ...req.query, userScope: " " } }, "query.userScope");
    await invalid(
      { ...req, sources: { ...req.sources, planner: { ...planner(), done: 9 } } },
      "sources.planner.done",
    );
    await invalid(
      {
        ...req,
        sources: {
          ...req.sources,
          constraints: [
            { id: "c1", level: "forbid", text: "a" },
            { id: "c1", level: "warn", text: "b" },
          ],
        },
      },
      "sources.constraints[1]",
    );
    // An unknown slot is an unknown field at its own path.
    await invalid({ ...req, sources: { ...req.sources, kb: [] } }, "sources.kb");
  });

  it("required content over the budget fails closed", async () => {
    await expect(
      assembleContext({ ...referenceRequest(), budgetChars: 20 }),
    ).rejects.toBeInstanceOf(PromptBudgetError);
  });
});
