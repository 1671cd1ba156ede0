/**
 * Deterministic synthetic data for the benchmark: a seeded PRNG (sfc32 seeded through
 * splitmix32) and small text generators (English prose, CJK, code snippets). Never
 * Math.random: the same seed always gives byte-identical workloads.
 */

function splitmix32(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

/** A seeded generator with the helpers the workloads need. */
export function createRng(seed) {
  const init = splitmix32(seed);
  let a = init();
  let b = init();
  let c = init();
  let d = init();
  const next = () => {
    // sfc32
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
  for (let i = 0; i < 16; i++) next();
  const rng = {
    /** Uniform in [0, 1). */
    float: next,
    /** Integer in [lo, hi] inclusive. */
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    chance: (p) => next() < p,
    pick: (arr) => arr[Math.floor(next() * arr.length)],
    /** Picks a key of `weights` ({key: weight}) proportionally to its weight. */
    weighted: (weights) => {
      const entries = Object.entries(weights);
      let total = 0;
      for (const [, w] of entries) total += w;
      let r = next() * total;
      for (const [k, w] of entries) {
        r -= w;
        if (r < 0) return k;
      }
      return entries[entries.length - 1][0];
    },
    /** Fisher–Yates, in place. */
    shuffle: (arr) => {
      for (let i = arr.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        [arr[i], arr[j]] = [arr[j], arr[i]];
      }
      return arr;
    },
  };
  return rng;
}

const WORDS = (
  "the user prefers python for automation scripts and bash only for quick one liners " +
  "deploy staging production cluster every friday after the review meeting with the " +
  "platform team please keep answers short and cite the source document when possible " +
  "project uses typescript strict mode with biome for linting and vitest for tests the " +
  "database is postgres sixteen with read replicas in two regions migrations run through " +
  "a release pipeline that requires approval from an owner timezone is asia shanghai " +
  "meetings are scheduled in the morning invoices go to finance at month end the api " +
  "gateway rate limits clients at one hundred requests per second budget tokens context " +
  "memory recall score rank authority workspace override default current turn slot " +
  "language preference editor vim emacs dark theme notifications disabled on weekends " +
  "customer onboarding checklist includes security training and a laptop with disk " +
  "encryption enabled the incident runbook lives in the operations wiki under paging " +
  "escalate to the on call engineer if latency exceeds five hundred milliseconds"
).split(" ");

const CJK =
  "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处理府研质";
const KANA = "のはにをがでとしてもからますですこれそれあれどこだれなにいつなぜ";

const CODE = [
  (r) => `const ${id(r)} = await fetch("/api/${r.pick(WORDS)}?limit=${r.int(1, 500)}");`,
  (r) => `def ${id(r)}(x, y=${r.int(0, 9)}):\n    return x * y + ${r.int(1, 99)}`,
  (r) => `if (a < b && c > d) { return "${r.pick(WORDS)}"; }`,
  (r) => `SELECT * FROM ${r.pick(WORDS)} WHERE id = ${r.int(1, 99999)} AND state <> 'done';`,
  (r) => `<div class="${r.pick(WORDS)}">${r.pick(WORDS)} &amp; ${r.pick(WORDS)}</div>`,
  (r) => `git commit -m "fix(${r.pick(WORDS)}): handle ${r.pick(WORDS)} edge case"`,
  (r) => `for (let i = 0; i < ${r.int(2, 64)}; i++) { ${id(r)}[i] ??= ${r.int(0, 9)}; }`,
  (r) => `export type ${cap(id(r))} = { ${id(r)}: string; ${id(r)}?: number };`,
  (r) => `$ npm run ${r.pick(["build", "test", "bench", "lint"])} -- --filter=${r.pick(WORDS)}`,
  (r) => `fn ${id(r)}(v: &[u8]) -> Result<usize, Error> { Ok(v.len() >> ${r.int(1, 4)}) }`,
];

function cap(s) {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function id(r) {
  return `${r.pick(WORDS)}${cap(r.pick(WORDS))}`;
}

/** One English sentence of `minWords`–`maxWords` words. */
export function sentence(r, minWords = 6, maxWords = 18) {
  const n = r.int(minWords, maxWords);
  const words = [];
  for (let i = 0; i < n; i++) words.push(r.pick(WORDS));
  const punct = r.pick([".", ".", ".", "!", "?", ";"]);
  return `${cap(words.join(" "))}${punct}`;
}

/** A CJK sentence of `minChars`–`maxChars` characters (Chinese with some kana). */
export function cjkSentence(r, minChars = 8, maxChars = 30) {
  const n = r.int(minChars, maxChars);
  let s = "";
  for (let i = 0; i < n; i++) {
    s += r.chance(0.15) ? r.pick(KANA) : CJK[r.int(0, CJK.length - 1)];
    if (i > 0 && i < n - 1 && r.chance(0.08)) s += "，";
  }
  return `${s}。`;
}

/** One code-ish line (contains `<`, `>`, `&`, quotes: exercises escaping). */
export function codeSnippet(r) {
  return r.pick(CODE)(r);
}

/** A fragment of the given kind: `prose` | `cjk` | `code` | `mixed`. */
export function fragment(r, kind) {
  switch (kind) {
    case "prose":
      return sentence(r);
    case "cjk":
      return cjkSentence(r);
    case "code":
      return codeSnippet(r);
    default:
      return fragment(r, r.pick(["prose", "cjk", "code"]));
  }
}

/**
 * Text of exactly `length` code points or slightly fewer (trailing whitespace trimmed),
 * built from fragments of `kind`, never blank.
 */
export function textOfLength(r, kind, length) {
  let s = "";
  while ([...s].length < length) {
    s += (s === "" ? "" : kind === "code" ? "\n" : " ") + fragment(r, kind);
  }
  const cut = [...s].slice(0, length).join("").trimEnd();
  return cut === "" ? "x" : cut;
}
