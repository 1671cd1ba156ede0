/**
 * Section `request-latency`: `POST /v1/request` at 1,000 messages in a 200,000-token
 * window (issue 34), against `JSON.parse` of its own request body.
 *
 * Workload: the `conversation` section's seeded history (tool outputs of 20 to 20,000
 * o200k_base tokens, heavy-tailed), its first 1,000 messages (trimmed to end on a text
 * message), sent to `anthropic` / `claude-sonnet-4-6` with a `{ segments }` system side and
 * `contextWindow` 200,000, all else the agent defaults. The server is `buildServer` in
 * this process on 127.0.0.1 (port 0), one keep-alive connection, one request at a time.
 * Per round, interleaved: `JSON.parse` of the body, one request (client-measured, body
 * sent and answer read whole), and the stages of the route on a fresh parse — validation
 * (`parseAgentRequestJson`: strict fields and values), planning (`requestFromJson`, the
 * library's `planAgentRequest` and the explanation), serialization (the answer's JSON and
 * its UTF-8 bytes), and the library's `planAgentRequest` alone. Each round also sends the
 * same body with `include: []` (answer `{ body }`) and `include: ["budget"]`. Figures:
 * medians after warm-up; the target is the median of the per-round ratio request / parse,
 * ≤ 3× (judged for the default answer and for `include: []`).
 *
 * The floor, shown without a target: the body's UTF-8 bytes decoded and parsed (what any
 * server does before its route runs: the parse baseline starts from a decoded string),
 * and the same body POSTed to a bare Fastify app in this process (its default JSON parser,
 * a route answering `{}`, same client) — the transport alone, before any planning.
 */
import http from "node:http";
import { hasGc, median, pairedRatio, round3 } from "../lib/measure.mjs";
import { importDist } from "../lib/modules.mjs";
import { heading, int, judge, ms, ratio, table, targetTable } from "../lib/report.mjs";
import { makeTurns } from "./conversation.mjs";

export const meta = {
  name: "request-latency",
  order: 37,
  title: "POST /v1/request at 1,000 messages in a 200k window vs JSON.parse of its body",
};

const MESSAGES = 1_000;
const WINDOW = 200_000;
const MAX_VS_PARSE = 3;

/** The body: 1,000 messages of the seeded history, ending on a text message. */
export function requestBody() {
  const messages = makeTurns(0xc0de, MESSAGES)
    .flatMap((t) => [...t.ask, t.answer])
    .slice(0, MESSAGES);
  while (messages.at(-1)?.content.some((p) => p.type !== "text")) messages.pop();
  return JSON.stringify({
    provider: "anthropic",
    model: "claude-sonnet-4-6",
    contextWindow: WINDOW,
    system: {
      segments: [{ name: "rules", content: "Be careful. ".repeat(300), cacheTier: "static" }],
    },
    messages,
  });
}

function poster(port, body, path = "/v1/request") {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const bytes = Buffer.from(body, "utf8");
  const post = () =>
    new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: "127.0.0.1",
          port,
          path,
          method: "POST",
          agent,
          headers: { "content-type": "application/json", "content-length": bytes.length },
        },
        (res) => {
          const chunks = [];
          res.on("data", (c) => chunks.push(c));
          res.on("end", () => {
            const answer = Buffer.concat(chunks);
            if (res.statusCode === 200) resolve(answer.length);
            else reject(new Error(`HTTP ${res.statusCode}: ${answer.toString("utf8")}`));
          });
        },
      );
      req.on("error", reject);
      req.end(bytes);
    });
  return { post, close: () => agent.destroy() };
}

const timed = (f) => {
  const t = performance.now();
  const out = f();
  return [performance.now() - t, out];
};

export async function run(ctx) {
  heading(meta.title);
  const { buildServer } = await importDist("server/index.js");
  const agent = await importDist("agent/index.js");
  const { planPrompt } = await importDist("plan/index.js");
  const tokens = await importDist("tokens/index.js");
  const body = requestBody();
  const count = JSON.parse(body).messages.length;
  const app = await buildServer({ logger: false });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const port = app.server.address().port;
  const client = poster(port, body);
  // The smaller answers: `include: []` ({ body }) and `include: ["budget"]`.
  const bodyOnly = poster(port, JSON.stringify({ ...JSON.parse(body), include: [] }));
  const withBudget = poster(port, JSON.stringify({ ...JSON.parse(body), include: ["budget"] }));
  // The floor: a bare Fastify app (default JSON parser), a route answering {}.
  const { default: fastify } = await import("fastify");
  const bare = fastify({ logger: false, bodyLimit: 64 * 1024 * 1024 });
  bare.post("/echo", async () => ({}));
  await bare.listen({ host: "127.0.0.1", port: 0 });
  const bareClient = poster(bare.server.address().port, body, "/echo");
  const bodyBytes = Buffer.from(body, "utf8");
  const rounds = Math.max(ctx.runs, 15);
  const warmup = Math.max(ctx.warmup, 3);
  const s = {
    parse: [],
    request: [],
    bodyOnly: [],
    withBudget: [],
    validate: [],
    plan: [],
    library: [],
    serialize: [],
    serializeBody: [],
    decodeParse: [],
    bare: [],
  };
  let answerBytes = 0;
  let bodyOnlyBytes = 0;
  try {
    for (let r = 0; r < warmup + rounds; r++) {
      if (hasGc) globalThis.gc();
      const [parse] = timed(() => JSON.parse(body));
      const [decodeParse] = timed(() => JSON.parse(bodyBytes.toString("utf8")));
      let t = performance.now();
      await bareClient.post();
      const bareMs = performance.now() - t;
      t = performance.now();
      answerBytes = await client.post();
      const request = performance.now() - t;
      t = performance.now();
      bodyOnlyBytes = await bodyOnly.post();
      const small = performance.now() - t;
      t = performance.now();
      await withBudget.post();
      const budgeted = performance.now() - t;
      const raw = JSON.parse(body);
      const [validate, parsed] = timed(() => agent.parseAgentRequestJson(raw));
      const system = planPrompt({ budgetChars: null, ...parsed.system });
      const [plan, answer] = timed(() => agent.requestFromJson(parsed, system, null));
      // The library's call alone (what requestFromJson runs, without the explanation).
      const counter = tokens.sharedTokenCounter("o200k_base");
      const [library] = timed(() =>
        agent.planAgentRequest({
          provider: parsed.provider,
          model: parsed.model,
          system,
          messages: parsed.messages,
          tokenizer: counter,
          contextWindow: parsed.contextWindow,
        }),
      );
      const [serialize] = timed(() => Buffer.from(JSON.stringify(answer), "utf8"));
      const [serializeBody] = timed(() =>
        Buffer.from(JSON.stringify({ body: answer.body }), "utf8"),
      );
      if (r < warmup) continue;
      s.parse.push(parse);
      s.request.push(request);
      s.bodyOnly.push(small);
      s.withBudget.push(budgeted);
      s.validate.push(validate);
      s.plan.push(plan);
      s.library.push(library);
      s.serialize.push(serialize);
      s.serializeBody.push(serializeBody);
      s.decodeParse.push(decodeParse);
      s.bare.push(bareMs);
    }
  } finally {
    client.close();
    bodyOnly.close();
    withBudget.close();
    bareClient.close();
    await app.close();
    await bare.close();
  }
  const m = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, median(v)]));
  const vsParse = pairedRatio(s.request, s.parse);
  const bodyOnlyVsParse = pairedRatio(s.bodyOnly, s.parse);
  const bareVsParse = pairedRatio(s.bare, s.parse);
  const decodeParseVsParse = pairedRatio(s.decodeParse, s.parse);
  console.log(
    `  ${int(count)} messages, body ${(body.length / 1e6).toFixed(2)} MB, answer ${(answerBytes / 1e6).toFixed(2)} MB (include: [] ${(bodyOnlyBytes / 1e6).toFixed(2)} MB); ${rounds} rounds after ${warmup} warm-up`,
  );
  table([
    ["step", "median", "× parse"],
    ["JSON.parse of the body", ms(m.parse), ratio(1)],
    ["POST /v1/request (client-measured)", ms(m.request), ratio(m.request / m.parse)],
    ["  with include: [] ({ body })", ms(m.bodyOnly), ratio(m.bodyOnly / m.parse)],
    ['  with include: ["budget"]', ms(m.withBudget), ratio(m.withBudget / m.parse)],
    ["  validation (parseAgentRequestJson)", ms(m.validate), ratio(m.validate / m.parse)],
    ["  planning (requestFromJson)", ms(m.plan), ratio(m.plan / m.parse)],
    ["  the library alone (planAgentRequest)", ms(m.library), ratio(m.library / m.parse)],
    ["  answer JSON + UTF-8 bytes", ms(m.serialize), ratio(m.serialize / m.parse)],
    ["  { body } JSON + UTF-8 bytes", ms(m.serializeBody), ratio(m.serializeBody / m.parse)],
    ["floor: UTF-8 decode + JSON.parse", ms(m.decodeParse), ratio(decodeParseVsParse)],
    ["floor: bare Fastify POST, answer {}", ms(m.bare), ratio(bareVsParse)],
  ]);
  targetTable([
    judge(meta.name, {
      check: "POST /v1/request p50 / JSON.parse (paired)",
      figure: vsParse,
      shown: ratio(vsParse),
      op: "<=",
      limit: MAX_VS_PARSE,
      shownLimit: `${MAX_VS_PARSE}×`,
      baseline: `parse ${ms(m.parse)}`,
    }),
    judge(meta.name, {
      check: "POST /v1/request, include: [], p50 / JSON.parse (paired)",
      figure: bodyOnlyVsParse,
      shown: ratio(bodyOnlyVsParse),
      op: "<=",
      limit: MAX_VS_PARSE,
      shownLimit: `${MAX_VS_PARSE}×`,
      baseline: `parse ${ms(m.parse)}`,
    }),
  ]);
  return {
    messages: count,
    bodyBytes: body.length,
    answerBytes,
    bodyOnlyBytes,
    bodyOnlyVsParse: round3(bodyOnlyVsParse),
    floor: { decodeParseVsParse: round3(decodeParseVsParse), bareVsParse: round3(bareVsParse) },
    rounds,
    medianMs: Object.fromEntries(Object.entries(m).map(([k, v]) => [k, round3(v)])),
    requestVsParse: round3(vsParse),
    pass: vsParse <= MAX_VS_PARSE,
  };
}
