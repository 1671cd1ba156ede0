#!/usr/bin/env node
/**
 * Times the red-line check and skill selection on hostile user patterns against drafts of
 * up to 200 KB (run `npm run build` first). Prints one line per pattern × draft and the
 * worst time; reports, asserts nothing (the tests assert behaviour, never time).
 *
 *   node scripts/measure-hostile-patterns.mjs
 */
import { checkDraft, compileRedLines, selectSkills } from "../dist/index.js";

const N = 200_000;
const PATTERNS = [
  `${"\\w{0,15}".repeat(8)}xy`,
  `${"\\d{1,15}".repeat(5)}!`,
  "(a+)+$",
  "(a|aa)+$",
  "(.*a){12}",
  "(\\w+\\s?)+$",
  "(?:(?:a{0,10}){0,10}){0,10}b",
  "(?i)(?:a|b|ab|ba|aab){1,50}c",
  "[\\x{0}-\\x{10ffff}]{0,100}z",
  "[\\s\\S]{0,500}z",
  "\\w{150,}!",
  "(?:a|b)*a(?:a|b){14}c",
  "(?:a|b)*a(?:a|b){20}c", // outgrows RE2's DFA cache: the NFA runs
  "[ab]*a[ab]{30}c",
  "[a-zA-Z0-9_.+-]{1,64}@[a-zA-Z0-9-]{1,63}(?:\\.[a-zA-Z0-9-]{1,63}){1,8}",
  "\\bsk-[A-Za-z0-9]{20,}",
];
const DRAFTS = {
  "a×200k+xy!bz c": `${"a".repeat(N - 8)}xy!bz c`,
  "a×200k": "a".repeat(N),
  "1×200k+!": `${"1".repeat(N - 1)}!`,
  "ab random": `${Array.from({ length: N - 1 }, (_, i) => ((i * 7919) % 13 < 6 ? "a" : "b")).join("")}c`,
  "word lines": `${(`${"word ".repeat(39)}word\n`).repeat(N / 200 - 1)}aaa!`,
  "30k a+xy": `${"a".repeat(30_000)}xy`,
};

let worst = { ms: 0, what: "" };
for (const pattern of PATTERNS) {
  let lines;
  try {
    lines = compileRedLines([{ id: "p", severity: "block", pattern }]);
  } catch (err) {
    console.log(
      `${pattern.slice(0, 44).padEnd(44)} refused: ${err.code} ${err.message.slice(0, 80)}`,
    );
    continue;
  }
  const catalog = {
    skills: [
      {
        name: "s",
        description: "d",
        path: "/s/SKILL.md",
        sha256: "0".repeat(16),
        triggers: { patterns: [pattern] },
        priority: 0,
        redLines: [],
        body: "b",
      },
    ],
    invalid: [],
    shadowed: [],
  };
  for (const [name, draft] of Object.entries(DRAFTS)) {
    const t0 = performance.now();
    const r = checkDraft(draft, lines);
    const check = performance.now() - t0;
    const t1 = performance.now();
    selectSkills(catalog, { text: draft, mode: "m" });
    const select = performance.now() - t1;
    for (const [what, ms] of [
      ["checkDraft", check],
      ["selectSkills", select],
    ]) {
      if (ms > worst.ms) worst = { ms, what: `${what} ${pattern} on ${name}` };
    }
    console.log(
      `${pattern.slice(0, 44).padEnd(44)} ${name.padEnd(16)} check ${check.toFixed(1).padStart(7)} ms (${r.incomplete ?? `${r.violations.length} hits`})  select ${select.toFixed(1).padStart(6)} ms`,
    );
  }
}
console.log(`worst: ${worst.ms.toFixed(1)} ms — ${worst.what}`);
