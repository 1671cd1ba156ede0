#!/usr/bin/env node
/**
 * Generates the recall evaluation set in test/fixtures/recall-eval/ (see the README
 * there): memories.jsonl (store records) and queries.jsonl (labelled queries).
 *
 *   node scripts/gen-recall-eval.mjs          # (re)write the fixture files
 *   node scripts/gen-recall-eval.mjs --check  # exit 1 if they differ from a fresh run
 *
 * Deterministic: a seeded PRNG (bench/lib/prng.mjs) over the hand-written topics of
 * recall-eval-topics.mjs; the same seed always gives byte-identical files.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createRng } from "../bench/lib/prng.mjs";
import {
  EN_NOISE,
  EN_OFF_TOPIC,
  EN_TOPICS,
  POOLS,
  ZH_NOISE,
  ZH_OFF_TOPIC,
  ZH_TOPICS,
} from "./recall-eval-topics.mjs";

export const SEED = 13;
/** The instant every recall of the evaluation is made at. */
export const AS_OF = "2026-06-30T12:00:00Z";
const AS_OF_MS = Date.parse(AS_OF);
const YEAR_S = 365 * 24 * 3600;

/** Scopes: name → language of its memories ("en", "zh" or "mix"). */
function scopeList() {
  const out = [];
  for (let i = 1; i <= 20; i++) out.push([`user-en-${String(i).padStart(2, "0")}`, "en"]);
  for (let i = 1; i <= 6; i++) out.push([`team-en-${String(i).padStart(2, "0")}`, "en"]);
  for (let i = 1; i <= 10; i++) out.push([`user-zh-${String(i).padStart(2, "0")}`, "zh"]);
  for (let i = 1; i <= 4; i++) out.push([`user-mix-${String(i).padStart(2, "0")}`, "mix"]);
  return out;
}

/** `text` with every `{slot}` replaced from `values`. */
function fill(text, values) {
  return text.replace(/\{(\w+)\}/g, (_, k) => {
    if (!(k in values)) throw new Error(`no value for {${k}} in ${JSON.stringify(text)}`);
    return values[k];
  });
}

/** `n` distinct picks of `arr`. */
function sample(r, arr, n) {
  return r.shuffle([...arr]).slice(0, Math.min(n, arr.length));
}

/**
 * The entities a scope talks about: a subset of each pool (so other scopes' entities,
 * and pool values this scope never uses, are there for near-miss queries).
 */
function scopeEntities(r, pools) {
  const out = {};
  for (const [name, values] of Object.entries(pools)) {
    out[name] = sample(r, values, Math.max(3, Math.ceil(values.length / 2)));
  }
  return out;
}

/** Slot values: keyed slots from `keyValues`, the rest picked from the scope's entities. */
function slotValues(r, slots, entities, keyValues) {
  const v = { ...keyValues };
  for (const [slot, pool] of Object.entries(slots)) {
    if (!(slot in v)) v[slot] = r.pick(entities[pool] ?? POOLS[pool]);
  }
  return v;
}

function capturedAt(r) {
  const t = AS_OF_MS - r.int(0, YEAR_S) * 1000;
  return new Date(t).toISOString().replace(".000Z", "Z");
}

function record(r, scope, n, content, kind, category) {
  return {
    memoryId: `${scope}-m${String(n).padStart(3, "0")}`,
    userScope: scope,
    kind,
    category,
    content,
    importance: Math.round((0.1 + r.float() * 0.9) * 100) / 100,
    source: {
      sourceId: `eval-${scope}`,
      sourceType: "chat",
      title: "Recall evaluation",
      capturedAt: capturedAt(r),
    },
  };
}

/** Facts of one topic in one scope: one per key value (or one for an unkeyed topic). */
function topicFacts(r, topic, entities) {
  const keys =
    topic.key === undefined ? [null] : sample(r, entities[topic.slots[topic.key]], r.int(2, 3));
  return keys.map((k) => {
    const values = slotValues(r, topic.slots, entities, k === null ? {} : { [topic.key]: k });
    return { topic, values, content: fill(r.pick(topic.memory), values) };
  });
}

function topicsFor(lang) {
  if (lang === "en") return EN_TOPICS;
  if (lang === "zh") return ZH_TOPICS;
  return [...EN_TOPICS, ...ZH_TOPICS];
}

function noiseFor(lang) {
  if (lang === "en") return EN_NOISE;
  if (lang === "zh") return ZH_NOISE;
  return [...EN_NOISE, ...ZH_NOISE];
}

function offTopicFor(lang) {
  if (lang === "en") return EN_OFF_TOPIC;
  if (lang === "zh") return ZH_OFF_TOPIC;
  return [...EN_OFF_TOPIC, ...ZH_OFF_TOPIC];
}

/** One scope's memories and queries. */
function generateScope(r, scope, lang) {
  const entities = scopeEntities(r, POOLS);
  const topics = sample(r, topicsFor(lang), lang === "mix" ? 16 : 12);
  const facts = topics.flatMap((t) => topicFacts(r, t, entities));
  const memories = [];
  const factIds = new Map();
  let n = 0;
  for (const f of facts) {
    const rec = record(r, scope, ++n, f.content, "fact", f.topic.category ?? "fact");
    factIds.set(f, rec.memoryId);
    memories.push(rec);
  }
  const noise = noiseFor(lang);
  while (memories.length < 75) {
    const tpl = r.pick(noise);
    const values = slotValues(r, tpl.slots, entities, {});
    memories.push(record(r, scope, ++n, fill(tpl.text, values), "episodic", "episodic"));
  }
  const queries = [];
  for (const f of sample(r, facts, 8)) {
    const text = fill(r.pick(f.topic.query), f.values);
    queries.push({ kind: "related", userScope: scope, text, relevant: [factIds.get(f)] });
  }
  for (const text of sample(r, offTopicFor(lang), 3)) {
    const zh = /\p{scx=Han}/u.test(text);
    const slots = zh
      ? { city: "zhFarCity", country: "zhCountry" }
      : { city: "farCity", country: "country" };
    const values = slotValues(r, slots, {}, {});
    queries.push({ kind: "off_topic", userScope: scope, text: fill(text, values), relevant: [] });
  }
  const keyed = topics.filter((t) => t.key !== undefined);
  for (const t of sample(r, keyed, 2)) {
    const pool = t.slots[t.key];
    const absent = POOLS[pool].filter((v) => !facts.some((f) => f.values[t.key] === v));
    if (absent.length === 0) continue;
    const values = slotValues(r, t.slots, entities, { [t.key]: r.pick(absent) });
    queries.push({
      kind: "near_miss",
      userScope: scope,
      text: fill(r.pick(t.query), values),
      relevant: [],
    });
  }
  return { memories, queries };
}

/** The whole set: `{memories, queries}`, queries numbered in order. */
export function generate(seed = SEED) {
  const r = createRng(seed);
  const memories = [];
  const queries = [];
  for (const [scope, lang] of scopeList()) {
    const s = generateScope(r, scope, lang);
    memories.push(...s.memories);
    for (const q of s.queries) {
      queries.push({ queryId: `q${String(queries.length + 1).padStart(3, "0")}`, lang, ...q });
    }
  }
  return { memories, queries };
}

const DIR = fileURLToPath(new URL("../test/fixtures/recall-eval/", import.meta.url));

/** The two files' text: `{"memories.jsonl": …, "queries.jsonl": …}`. */
export function fixtureFiles(seed = SEED) {
  const { memories, queries } = generate(seed);
  const jsonl = (rows) => rows.map((x) => `${JSON.stringify(x)}\n`).join("");
  return { "memories.jsonl": jsonl(memories), "queries.jsonl": jsonl(queries) };
}

function main() {
  const check = process.argv.includes("--check");
  let stale = 0;
  for (const [name, text] of Object.entries(fixtureFiles())) {
    const file = DIR + name;
    if (check) {
      let old = "";
      try {
        old = readFileSync(file, "utf8");
      } catch {
        // missing counts as stale
      }
      if (old !== text) {
        console.error(`${file} is stale: run node scripts/gen-recall-eval.mjs`);
        stale++;
      }
    } else {
      writeFileSync(file, text);
      console.log(`wrote ${file} (${text.split("\n").length - 1} lines)`);
    }
  }
  return stale === 0 ? 0 : 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exit(main());
