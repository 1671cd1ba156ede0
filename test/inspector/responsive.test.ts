/**
 * The inspector from a phone to a desktop, in real headless chromium against the built
 * CLI's `promptctx inspect`: at 390×844 the page never scrolls sideways, text is readable
 * and the turn list becomes a picker; at 1280×800 the list is a sidebar. Deep links (turn
 * and view in the hash) survive a reload, back/forward move between turns, turn labels
 * tell turns apart, and `/` serves the page.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openBrowser, screenshot, startInspect, stop, writeSession } from "./helpers.js";

let tmp: string;
let child: ChildProcess;
let base: string;
let browser: Browser;
let page: Page;

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };
const VIEWS = ["prompt", "tokens", "decisions", "diff", "cost"] as const;

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), "promptctx-inspector-responsive-"));
  const session = writeSession(tmp);
  const started = await startInspect(session.file);
  child = started.child;
  base = new URL(started.url).origin;
  ({ browser, page } = await openBrowser());
});
afterAll(async () => {
  await browser?.close();
  if (child) await stop(child);
  rmSync(tmp, { recursive: true, force: true });
});

/** Loads `/` at `hash` from scratch and waits until the page has drawn. */
async function load(hash: string): Promise<void> {
  await page.goto(`${base}/${hash}`);
  await page.reload();
  await page.waitForSelector("body[data-ready]");
}

// The checks below run in the page: they are JavaScript text, since this project's
// TypeScript has no DOM types.

/** Waits until the page shows turn `n` in view `view`. */
async function shows(n: number, view: string): Promise<void> {
  await page.waitForFunction(
    `(document.getElementById("turn-title")?.textContent ?? "").startsWith("Turn ${n} of") &&
     document.getElementById("view")?.dataset.view === ${JSON.stringify(view)}`,
  );
}

interface Measure {
  scrollWidth: number;
  viewport: number;
  /** Elements with text of their own in a font smaller than 12px. */
  small: string[];
}

/** The page's horizontal scroll extent, its viewport, and text smaller than 12px. */
const measure = (): Promise<Measure> =>
  page.evaluate(`(() => {
    const small = [];
    for (const el of document.querySelectorAll("body *")) {
      const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
      if (!own || el.getClientRects().length === 0) continue;
      const size = Number.parseFloat(getComputedStyle(el).fontSize);
      if (size < 12) small.push(el.tagName.toLowerCase() + "." + el.className + " " + size + "px");
    }
    return {
      scrollWidth: document.documentElement.scrollWidth,
      viewport: document.documentElement.clientWidth,
      small,
    };
  })()`);

/** How many line boxes `word` takes where it first appears in the prompt (1: not split). */
const linesOf = (word: string): Promise<number | string> =>
  page.evaluate(`(() => {
    const walker = document.createTreeWalker(document.getElementById("prompt"), NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n !== null; n = walker.nextNode()) {
      const at = n.textContent.indexOf(${JSON.stringify(word)});
      if (at < 0) continue;
      const range = document.createRange();
      range.setStart(n, at);
      range.setEnd(n, at + ${JSON.stringify(word)}.length);
      return range.getClientRects().length;
    }
    return "missing";
  })()`);

describe("on a phone (390×844)", () => {
  beforeAll(async () => {
    await page.setViewportSize(PHONE);
  });

  it("no view scrolls the page sideways and no text is under 12px", async () => {
    for (const view of VIEWS) {
      for (const turn of [3, 8]) {
        await load(`#turn=${turn}&view=${view}`);
        await shows(turn, view);
        const m = await measure();
        expect(m.viewport, view).toBe(PHONE.width);
        expect(m.scrollWidth, `${view} turn ${turn}`).toBe(m.viewport);
        expect(m.small, view).toEqual([]);
      }
    }
    await load("#turn=3&view=prompt");
    await screenshot(page, "phone");
  });

  it("the prompt takes the screen's width and wraps at words", async () => {
    await load("#turn=3&view=prompt");
    const prompt = (await page.evaluate(`(() => {
      const el = document.getElementById("prompt");
      const style = getComputedStyle(el);
      return {
        width: el.getBoundingClientRect().width,
        whiteSpace: style.whiteSpace,
        overflowWrap: style.overflowWrap,
      };
    })()`)) as { width: number; whiteSpace: string; overflowWrap: string };
    expect(prompt.width).toBeGreaterThan(PHONE.width * 0.85);
    expect(prompt).toMatchObject({ whiteSpace: "pre-wrap", overflowWrap: "anywhere" });
    // Lines of prose wrap between words: no word is split across two lines.
    for (const word of ["trade-offs", "configuration", "environment.", "passing."]) {
      expect(await linesOf(word), word).toBe(1);
    }
  });

  it("the turn list is a picker: choosing a turn shows it; labels tell turns apart", async () => {
    await load("#turn=1&view=prompt");
    expect(await page.isVisible("#turn-list")).toBe(false);
    expect(await page.isVisible("#turn-picker")).toBe(true);
    const labels = await page.$$eval("#turn-picker option", (os) => os.map((o) => o.textContent));
    expect(labels).toHaveLength(8);
    expect(new Set(labels).size).toBe(8);
    expect(labels[0]).toBe(
      "1 · assemble · 09:00:00 · add an index on invoices.created_at in a new…",
    );
    expect(labels[4]).toMatch(/^5 · chat · 09:20:00 · add a currency column to invoices$/);
    await page.selectOption("#turn-picker", { index: 3 });
    await shows(4, "prompt");
    expect(page.url()).toContain("turn=4");
    expect(await page.inputValue("#turn-picker")).toBe("3");
  });
});

describe("deep links and history", () => {
  beforeAll(async () => {
    await page.setViewportSize(PHONE);
  });

  it("a reload on a deep link shows that turn and view, at both sizes", async () => {
    for (const size of [PHONE, DESKTOP]) {
      await page.setViewportSize(size);
      await load("#turn=5&view=tokens");
      await shows(5, "tokens");
      expect(await page.getAttribute('.views button[data-view="tokens"]', "aria-pressed")).toBe(
        "true",
      );
      await page.reload();
      await page.waitForSelector("body[data-ready]");
      await shows(5, "tokens");
    }
  });

  it("back and forward move between the turns and views visited; an edited hash is followed", async () => {
    await page.setViewportSize(PHONE);
    await load("#turn=2&view=prompt");
    await page.selectOption("#turn-picker", { index: 3 });
    await shows(4, "prompt");
    await page.click('.views button[data-view="decisions"]');
    await shows(4, "decisions");
    await page.goBack();
    await shows(4, "prompt");
    await page.goBack();
    await shows(2, "prompt");
    await page.goForward();
    await shows(4, "prompt");
    await page.goForward();
    await shows(4, "decisions");
    await page.evaluate(`location.hash = "#turn=6&view=cost"`);
    await shows(6, "cost");
    expect(await page.inputValue("#turn-picker")).toBe("5");
  });
});

describe("on a desktop (1280×800)", () => {
  beforeAll(async () => {
    await page.setViewportSize(DESKTOP);
  });

  it("the turn list is a sidebar, no view scrolls sideways, no text is under 12px", async () => {
    for (const view of VIEWS) {
      await load(`#turn=3&view=${view}`);
      await shows(3, view);
      const m = await measure();
      expect(m.scrollWidth, view).toBe(DESKTOP.width);
      expect(m.small, view).toEqual([]);
    }
    expect(await page.isVisible("#turn-list")).toBe(true);
    expect(await page.isVisible("#turn-picker")).toBe(false);
    await page.click("#turn-6");
    await shows(6, "cost");
    await page.goBack();
    await shows(3, "cost");
    await load("#turn=3&view=prompt");
    await screenshot(page, "desktop");
  });

  it("/ and /inspect serve the same page", async () => {
    const root = await fetch(`${base}/`);
    const inspect = await fetch(`${base}/inspect`);
    expect(root.status).toBe(200);
    expect(root.headers.get("content-type")).toContain("text/html");
    expect(await root.text()).toBe(await inspect.text());
  });
});
