/**
 * Markdown reading for instruction files: masks code (fenced blocks and inline code spans)
 * and finds `@` imports outside it. A token is an import when it starts with `@` at the
 * start of a line or after whitespace, outside inline code spans and fenced code blocks
 * (``` or ~~~), and the rest (up to the next whitespace, minus trailing `.,;:!?)]}>"'`)
 * looks like a file path: it starts with `~/`, contains a `/`, or ends in an extension
 * (`.md`, `.txt`, …). So `@docs/style.md`, `@./x.md` and `@~/notes.md` are imports, while
 * `@alice`, `user@host.com` and `` `@x.md` `` are not.
 */
import { isBlank } from "./whitespace.js";

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})(.*)$/s; // s: the info string may end in \r
const FENCE_CLOSE = /^ {0,3}(`{3,}|~{3,})[ \t\r]*$/;

/**
 * `text` with fenced code blocks and inline code spans blanked out (every masked code
 * unit but `\n` becomes U+0000), so offsets stay the same.
 */
export function maskMarkdownCode(text: string): string {
  const lines = text.split("\n");
  const out: string[] = [];
  let paragraph: string[] = [];
  let fence: { char: string; len: number } | null = null;
  const flush = () => {
    if (paragraph.length > 0) out.push(...maskInlineCode(paragraph.join("\n")).split("\n"));
    paragraph = [];
  };
  for (const line of lines) {
    if (fence !== null) {
      const m = FENCE_CLOSE.exec(line);
      const run = m?.[1];
      if (run !== undefined && run[0] === fence.char && run.length >= fence.len) fence = null;
      out.push(blank(line));
      continue;
    }
    const m = FENCE_OPEN.exec(line);
    const run = m?.[1];
    if (run !== undefined && !(run[0] === "`" && (m?.[2] ?? "").includes("`"))) {
      flush();
      fence = { char: run[0] as string, len: run.length };
      out.push(blank(line));
      continue;
    }
    if (isBlank(line)) {
      flush();
      out.push(line);
      continue;
    }
    paragraph.push(line);
  }
  flush();
  return out.join("\n");
}

// Masked code becomes NUL, which is neither whitespace nor part of a token, so code can
// neither hold an import nor start one (`x`@a.md is not an import).
function blank(s: string): string {
  return s.replace(/[^\n]/g, "\u0000");
}

function backtickRun(s: string, i: number): number {
  let j = i;
  while (j < s.length && s[j] === "`") j++;
  return j - i;
}

/** Blanks CommonMark code spans: a run of n backticks up to the next run of exactly n. */
function maskInlineCode(s: string): string {
  let out = "";
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === "\\" && s[i + 1] === "`") {
      out += "\\`";
      i += 2;
      continue;
    }
    if (c !== "`") {
      out += c;
      i++;
      continue;
    }
    const n = backtickRun(s, i);
    let j = i + n;
    let close = -1;
    while (j < s.length) {
      if (s[j] === "`") {
        const m = backtickRun(s, j);
        if (m === n) {
          close = j + m;
          break;
        }
        j += m;
      } else j++;
    }
    if (close < 0) {
      // No closing run: the backticks are literal text.
      out += s.slice(i, i + n);
      i += n;
    } else {
      out += blank(s.slice(i, close));
      i = close;
    }
  }
  return out;
}

const IMPORT_TOKEN = /(?:^|\s)@([^\s\u0000]+)/gu;
const TRAILING_PUNCT = /[.,;:!?)\]}>"']+$/u;
const HAS_EXTENSION = /\.[A-Za-z0-9_-]+$/u;

/**
 * The `@` import paths of a Markdown text, in order of appearance (see the module comment
 * for the rule).
 *
 * @example findImports("see @docs/a.md and `@b.md`, mail me@x.org") // ["docs/a.md"]
 */
export function findImports(text: string): string[] {
  const masked = maskMarkdownCode(text);
  const found: string[] = [];
  for (const m of masked.matchAll(IMPORT_TOKEN)) {
    const raw = (m[1] as string).replace(TRAILING_PUNCT, "");
    if (raw === "" || raw.startsWith("@")) continue;
    if (raw === "~" || raw.startsWith("~/") || raw.includes("/") || HAS_EXTENSION.test(raw)) {
      found.push(raw);
    }
  }
  return found;
}
