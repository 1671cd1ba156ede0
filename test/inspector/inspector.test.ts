/**
 * The inspector page in a real headless browser (Debian's chromium through playwright-core)
 * against the built CLI's `promptctx inspect` on 127.0.0.1: a recorded session's layers,
 * tokens, decision filters, diff and cost figures are checked against the recording's own
 * numbers, the page is driven by keyboard, and each view is screenshotted to test-output/.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cacheBreak } from "../../src/cache/index.js";
import { compareResponses, isErrorResponse, type ParsedLine } from "../../src/workspace/index.js";
import {
  assemblyAt,
  MATCHES,
  openBrowser,
  screenshot,
  sha16,
  startInspect,
  stop,
  writeSession,
} from "./helpers.js";

let tmp: string;
let lines: ParsedLine[];
let child: ChildProcess;
let url: string;
let browser: Browser;
let page: Page;
let requested: string[];

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), "promptctx-inspector-"));
  const session = writeSession(tmp);
  lines = session.lines;
  ({ child, url } = await startInspect(session.file));
  ({ browser, page, requested } = await openBrowser());
});
afterAll(async () => {
  await browser?.close();
  if (child) await stop(child);
  rmSync(tmp, { recursive: true, force: true });
});

/** Opens the page at `hash` and waits until it has drawn. */
async function open(hash = ""): Promise<void> {
  await page.goto(`${url}${hash}`);
  await page.reload();
  await page.waitForSelector("body[data-ready]");
}

async function view(name: string): Promise<void> {
  await page.click(`.views button[data-view="${name}"]`);
  await page.waitForSelector(`#view[data-view="${name}"]`);
}

const texts = (selector: string) =>
  page.$$eval(selector, (els) => els.map((e) => (e.textContent ?? "").trim()));

describe("the prompt view", () => {
  it("highlights every included layer of the turn, each the recorded bytes", async () => {
    await open();
    const a = assemblyAt(lines, 1);
    const layers = await page.$$eval("#prompt .layer", (els) =>
      els.map((e) => ({ id: e.getAttribute("data-layer"), text: e.textContent ?? "" })),
    );
    const included = a.manifest.layers.filter((l) => l.status === "included");
    expect(layers.map((l) => l.id)).toEqual(included.map((l) => l.id));
    for (const [i, l] of layers.entries()) expect(sha16(l.text)).toBe(included[i]?.versionId);
    expect(await page.textContent("#prompt")).toBe(a.prompt);
    const boundaries = await page.$$eval("#prompt .gap.boundary", (els) => els.length);
    expect(boundaries).toBe(a.segmentPlan.tiers.length - 1);
    expect(await page.textContent("#turn-title")).toContain("Turn 1 of 8 · assemble");
  });

  it("hovering a layer shows its decision, tier, tokens, version and source refs", async () => {
    const a = assemblyAt(lines, 1);
    const layer = a.manifest.layers.find((l) => l.id === "recall_memory");
    if (layer === undefined) throw new Error("no recall_memory");
    await page.hover('#prompt .layer[data-layer="recall_memory"]');
    const detail = page.locator('#layer-detail [data-detail="recall_memory"]');
    await detail.waitFor();
    const text = (await detail.textContent()) ?? "";
    expect(text).toContain(`${layer.status} · ${layer.reason}`);
    expect(text).toContain(layer.detail);
    expect(text).toContain(`tier${layer.cacheTier}`);
    expect(text).toContain(`tokens${layer.used.tokens}`);
    expect(text).toContain(`version${layer.versionId}`);
    expect(
      await texts('#layer-detail [data-detail="recall_memory"] ul.refs:first-of-type li'),
    ).toEqual(layer.sourceRefs);
    await screenshot(page, "prompt");
  });
});

describe("keyboard", () => {
  it("arrow keys move between turns, Tab reaches the views and the layers, Enter/Space select", async () => {
    await open();
    await page.focus("#turn-list");
    await page.keyboard.press("ArrowDown");
    await page.waitForSelector('#turn-2[aria-selected="true"]');
    expect(await page.textContent("#turn-title")).toContain("Turn 2 of 8");
    await page.keyboard.press("End");
    await page.waitForSelector('#turn-8[aria-selected="true"]');
    await page.keyboard.press("Home");
    await page.waitForSelector('#turn-1[aria-selected="true"]');
    // From the page itself, too.
    await page.click("#turn-title");
    await page.keyboard.press("ArrowRight");
    await page.waitForSelector('#turn-2[aria-selected="true"]');
    await page.keyboard.press("ArrowLeft");
    await page.waitForSelector('#turn-1[aria-selected="true"]');

    // Tab order: the turn list, the five views, then the prompt's layers in order.
    await page.focus("#turn-list");
    const order: string[] = [];
    for (let i = 0; i < 7; i++) {
      await page.keyboard.press("Tab");
      const focus = page.locator(":focus");
      order.push(
        (await focus.getAttribute("data-view")) ?? (await focus.getAttribute("data-layer")) ?? "",
      );
    }
    const first = assemblyAt(lines, 1).manifest.layers.filter((l) => l.status === "included");
    expect(order).toEqual([
      "prompt",
      "tokens",
      "decisions",
      "diff",
      "cost",
      first[0]?.id,
      first[1]?.id,
    ]);

    const focused = `#prompt .layer[data-layer="${first[1]?.id}"]`;
    await page.keyboard.press("Enter");
    await page.waitForSelector(`${focused}[aria-pressed="true"]`);
    expect(page.url()).toContain(`layer=${first[1]?.id}`);
    await page.keyboard.press(" ");
    await page.waitForSelector(`${focused}[aria-pressed="false"]`);
    await page.keyboard.press(" ");
    await page.waitForSelector(`${focused}[aria-pressed="true"]`);
    await page.keyboard.press("Escape");
    await page.waitForSelector(`${focused}[aria-pressed="false"]`);
  });
});

describe("the tokens view", () => {
  it("bars per tier and per layer with the recorded figures and the cache boundaries", async () => {
    await open("#turn=3");
    await view("tokens");
    const a = assemblyAt(lines, 3);
    for (const t of a.segmentPlan.tiers) {
      const n = await page.textContent(`.tiers-table tr[data-tier="${t.tier}"] td.n`);
      expect(Number(n?.replace(/,/g, ""))).toBe(t.tokens);
      expect(await page.textContent(`tr[data-boundary="${t.tier}"]`)).toContain(
        a.manifest.cacheKeys[t.tier] as string,
      );
    }
    for (const l of a.manifest.layers) {
      const n = await page.textContent(`.layers-table tr[data-layer="${l.id}"] td.n`);
      expect(Number(n?.replace(/,/g, ""))).toBe(l.used.tokens);
    }
    await screenshot(page, "tokens");
  });
});

describe("the decisions view", () => {
  it("every table, filtered by status and by reason, counts matching the recording", async () => {
    await open("#turn=1");
    await view("decisions");
    const a = assemblyAt(lines, 1);
    const all = [
      ...a.manifest.layers.map((l) => l.status),
      ...a.manifest.layers.flatMap((l) => l.items.map((i) => i.status)),
      ...(a.memoryPlan?.decisions ?? []).map((d) => d.status),
    ];
    expect(await page.textContent("#decision-count")).toBe(
      `${all.length} of ${all.length} decisions shown`,
    );
    const captions = await texts("table.decisions caption");
    expect(captions.map((c) => c.split(" · ")[0])).toEqual([
      "Layers (segments)",
      "Memory",
      "Skills",
      "KB chunks",
      "Other items",
    ]);

    await page.selectOption("#filter-status", "rejected");
    const rejected = all.filter((s) => s === "rejected").length;
    await page.waitForSelector(
      `#decision-count:text("${rejected} of ${all.length} decisions shown")`,
    );
    expect(new Set(await texts("table.decisions tbody .badge"))).toEqual(new Set(["rejected"]));

    await page.selectOption("#filter-reason", "authority_loser");
    const memory = (a.memoryPlan?.decisions ?? []).filter((d) => d.reason === "authority_loser");
    const ids = await texts('table[data-table="memory"] tbody tr td:first-child');
    expect(ids).toEqual(memory.map((d) => d.memoryId));
    expect(await page.textContent('table[data-table="layers"] caption')).toContain(
      `0 of ${a.manifest.layers.length}`,
    );
    expect(page.url()).toContain("status=rejected");
    await screenshot(page, "decisions");

    await page.selectOption("#filter-status", "");
    await page.selectOption("#filter-reason", "");
    await page.fill("#filter-search", "kb");
    const kbItems = a.manifest.layers.find((l) => l.id === "kb")?.items.length ?? 0;
    expect(await page.textContent('table[data-table="kb"] caption')).toContain(
      `${kbItems} of ${kbItems}`,
    );
  });
});

describe("the memory table: each hit explains itself", () => {
  it("shows how recall found each memory (path, ranks, similarity, fused), every figure on hover", async () => {
    await open("#turn=8");
    await view("decisions");
    const a = assemblyAt(lines, 8);
    const decisions = a.memoryPlan?.decisions ?? [];
    const heads = await texts('table[data-table="memory"] thead th');
    expect(heads).toEqual(["memory", "status", "reason", "score", "match", "detail"]);
    const rows = await page.$$eval('table[data-table="memory"] tbody tr', (trs) =>
      trs.map((tr) => {
        const m = tr.querySelector(".match");
        return {
          id: tr.getAttribute("data-id"),
          match: (m?.textContent ?? "").trim(),
          title: m?.getAttribute("title") ?? null,
        };
      }),
    );
    expect(rows.map((r) => r.id)).toEqual(decisions.map((d) => d.memoryId));
    expect(rows[0]).toMatchObject({
      match: "both · words #2 · meaning #1 (sim 0.612) · fused 0.700",
    });
    expect(rows[0]!.title).toContain("lexical rank: 2");
    expect(rows[0]!.title).toContain("similarity: 0.6123");
    expect(rows[0]!.title).toContain(`rrf: ${MATCHES[0].rrf.toFixed(6)}`);
    expect(rows[1]).toMatchObject({ match: "semantic · meaning #2 (sim 0.550) · fused 0.510" });
    expect(rows[1]!.title).toContain("lexical rank: none");
    for (const r of rows.slice(MATCHES.length))
      expect(r).toMatchObject({ match: "—", title: null });
    // The text filter reads the match too.
    await page.fill("#filter-search", "meaning #2");
    expect(await texts('table[data-table="memory"] tbody tr td:first-child')).toEqual([
      decisions[1]!.memoryId,
    ]);
    await page.fill("#filter-search", "");
    await screenshot(page, "memory-match");
    // A turn recalled by words only: no match on any row.
    await open("#turn=1");
    await view("decisions");
    expect(new Set(await texts('table[data-table="memory"] tbody .match'))).toEqual(new Set(["—"]));
  });
});

describe("the diff view", () => {
  it("names the tier that broke the cache first and the first changed layer's bytes", async () => {
    await open("#turn=3");
    await view("diff");
    const [a, b] = [assemblyAt(lines, 2), assemblyAt(lines, 3)];
    const expected = compareResponses(a, b);
    await page.waitForSelector('#diff-result[data-ready="2:3"]');
    const brk = cacheBreak(a.manifest.cacheKeys, b.manifest.cacheKeys);
    expect(brk).toBe("session");
    expect(await page.getAttribute("#cache-break", "data-tier")).toBe(brk);
    const c = expected.firstChangedLayer;
    if (c === null) throw new Error("no changed layer");
    expect(await page.textContent(".first-change h3")).toBe(`First changed layer: ${c.layer}`);
    expect(await page.textContent("#first-change-bytes")).toBe(
      `${c.bytesBefore} → ${c.bytesAfter} bytes · first change at byte ${c.offset}`,
    );
    expect(await page.textContent(".first-change ins")).toBe(c.added);
    expect(await texts(".changed-layers tbody td:first-child")).toEqual(
      expected.layers.map((l) => l.id),
    );
    expect(await texts(".keys tr.changed td:first-child")).toEqual(
      expected.cacheKeys.map((k) => k.tier),
    );
    await screenshot(page, "diff");

    await page.selectOption("#diff-a", "1");
    await page.selectOption("#diff-b", "2");
    await page.waitForSelector('#diff-result[data-ready="1:2"]');
    expect(await page.textContent("#cache-break")).toContain("No cache key changed");
    expect(await page.textContent("#prompt-bytes")).toContain("identical");
  });
});

/** The cost of each turn computed here from the recording, the way docs/inspector.md says. */
function expectedCost(price: number): { total: number; uncached: number; share: number } {
  const TIERS = ["static", "session", "dynamic"] as const;
  let previous: ParsedLine["response"] | null = null;
  let total = 0;
  let uncachedTotal = 0;
  let read = 0;
  let input = 0;
  for (const line of lines) {
    if (isErrorResponse(line.response)) continue;
    const a = line.response;
    const brk =
      previous === null || isErrorResponse(previous)
        ? "static"
        : (cacheBreak(previous.manifest.cacheKeys, a.manifest.cacheKeys) ?? "none");
    const stop = brk === "none" ? 3 : TIERS.indexOf(brk);
    let r = 0;
    let w = 0;
    for (const t of a.segmentPlan.tiers) {
      if (t.tier === "dynamic") continue;
      if (TIERS.indexOf(t.tier) < stop) r += t.tokens;
      else w += t.tokens;
    }
    const all = a.manifest.used.tokens + (a.conversationPlan?.usedTokens ?? 0);
    const u = all - r - w;
    total += (price / 1e6) * (0.1 * r + 1.25 * w + u);
    uncachedTotal += (price / 1e6) * all;
    read += r;
    input += all;
    previous = a;
  }
  return { total, uncached: uncachedTotal, share: read / input };
}

describe("the cost view", () => {
  it("prices every turn with cache reads and writes; the price is the user's", async () => {
    await open("#turn=1");
    await view("cost");
    const at3 = expectedCost(3);
    expect(await page.textContent("#total-cost")).toBe(`$${at3.total.toFixed(6)}`);
    expect(await page.textContent("#total-uncached")).toBe(`$${at3.uncached.toFixed(6)}`);
    expect(await page.textContent("#read-share")).toBe(`${(at3.share * 100).toFixed(1)}%`);
    expect(await page.$$eval("table.costs tbody tr", (r) => r.length)).toBe(7); // turn 7 failed
    await screenshot(page, "cost");

    await page.fill("#price", "15");
    const at15 = expectedCost(15);
    await page.waitForSelector(`#total-cost:text("$${at15.total.toFixed(6)}")`);
    expect(page.url()).toContain("price=15");
  });
});

describe("a conversation and a failed turn", () => {
  it("shows the history and tool results beside the system prompt", async () => {
    await open("#turn=8");
    const plan = assemblyAt(lines, 8).conversationPlan;
    if (plan === undefined) throw new Error("no conversation plan");
    const shown = await page.$$eval(".conversation li", (els) =>
      els.map((e) => e.getAttribute("data-message")),
    );
    expect(shown).toEqual(plan.decisions.map((d) => d.messageId));
    expect(plan.decisions.some((d) => d.status === "dropped")).toBe(true);
    await screenshot(page, "conversation");

    await view("tokens");
    const roles = new Map(plan.messages.map((m) => [m.id, m.role]));
    const kept = plan.decisions.filter((d) => d.status === "kept");
    const tools = kept
      .filter((d) => roles.get(d.messageId) === "tool")
      .reduce((s, d) => s + d.tokens, 0);
    const history = kept.reduce((s, d) => s + d.tokens, 0) - tools;
    expect(await page.textContent('.request-table tr[data-part="history"] td.n')).toBe(
      String(history),
    );
    expect(await page.textContent('.request-table tr[data-part="tool results"] td.n')).toBe(
      String(tools),
    );

    await view("decisions");
    expect(await page.textContent('table[data-table="conversation"] caption')).toContain(
      `${plan.decisions.length} of ${plan.decisions.length}`,
    );
  });

  it("a failed turn says why", async () => {
    await open("#turn=7");
    const r = lines[6]?.response;
    if (r === undefined || !isErrorResponse(r)) throw new Error("turn 7 should have failed");
    expect(await page.textContent("#turn-error")).toContain(`${r.error.code} — ${r.error.message}`);
  });
});

describe("offline", () => {
  it("the page asked only its own origin for anything; screenshots were written", () => {
    const origin = new URL(url).origin;
    expect(requested.length).toBeGreaterThan(0);
    expect(requested.filter((u) => !u.startsWith(origin) && !u.startsWith("data:"))).toEqual([]);
    for (const name of ["prompt", "tokens", "decisions", "diff", "cost", "conversation"]) {
      expect(existsSync(join(process.cwd(), "test-output", `inspector-${name}.png`))).toBe(true);
    }
  });
});
