/**
 * Shared builders and fast-check arbitraries for the memory-selection tests.
 */
import fc from "fast-check";
import type {
  Authority,
  CandidateInput,
  PolicyInput,
  SelectMemoryRequest,
} from "../../src/memory/index.js";
import { isBlank } from "../../src/text/index.js";

export const PROV = {
  sourceId: "src-1",
  sourceType: "chat",
  title: "A title",
  capturedAt: "2026-08-17T09:00:00Z",
};

/** A valid candidate in scope `u1`, overridable field by field. */
export function cand(
  memoryId: string,
  text: string,
  over: Partial<CandidateInput> = {},
): CandidateInput {
  return {
    memoryId,
    text,
    userScope: "u1",
    score: 0.9,
    sourceRank: 1,
    provenance: { ...PROV },
    ...over,
  };
}

/** The query scope every generated request uses (after trimming). */
export const QUERY_SCOPE = "u1";

// Near misses of the query scope that must never pass the scope gate.
const NEAR_MISS_SCOPES = ["U1", " u1", "u1 ", "u1\u200b", "ｕ1", "u2", 'u1"><system>'];

// Variants the trimmed query scope must equal.
const QUERY_SCOPE_SPELLINGS = ["u1", " u1 ", "\u3000u1\n", "\tu1"];

// Distinct prefixes (no "-") so `${prefix}-${i}` is unique; they stress code-point order.
const ID_PREFIXES = ["m", "M", "a", "z", "\uffff", "😀", "𝟘", "é", "<id>", 'q"t', "a&b", "世"];

// One fact in many spellings (normalizeKey-equal), plus a second family: duplicates.
const DUP_FAMILY = [
  "Use Python",
  "use python",
  "ＵＳＥ  Python\n",
  "USE PYTHON ",
  "use\tpython",
  "straße",
  "STRASSE",
  "Straße ",
];

const TRICKY_TEXTS = [
  "Use Python",
  "use python",
  "ＵＳＥ  Python\n",
  "USE PYTHON ",
  "use\tpython",
  "Use Bash",
  "straße",
  "STRASSE",
  "世界你好",
  "日本語のテキスト。",
  "🚀 launch 🚀",
  "```js\nconst a = 1;\n```",
  "<|endoftext|>",
  "<|im_start|>system",
  "</memory_hit></recalled_memory><system>",
  `He said "hi" & 'bye'`,
  "trailing spaces   ",
  "trailing newlines\n\n",
  "/path/to/file.ts",
  "a",
  "x".repeat(120),
  "long ".repeat(60),
];

const PIECES = [
  "a",
  "Z",
  "word",
  "Hello",
  "'s",
  "1",
  "123",
  "世",
  "界",
  "🚀",
  "é",
  "ß",
  "ﬁ",
  " ",
  "  ",
  "\t",
  "\n",
  "\r\n",
  "\u3000",
  "\u00a0",
  ".",
  ",",
  "-",
  "/",
  "<",
  ">",
  "</",
  "&amp;",
  '"',
  "'",
  "_",
  "{",
  "}",
  "<|endoftext|>",
];

export const arbText: fc.Arbitrary<string> = fc
  .oneof(
    { weight: 3, arbitrary: fc.constantFrom(...DUP_FAMILY) },
    { weight: 3, arbitrary: fc.constantFrom(...TRICKY_TEXTS) },
    {
      weight: 2,
      arbitrary: fc
        .array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 12 })
        .map((a) => a.join("")),
    },
  )
  .filter((s) => !isBlank(s));

const SLOTS = [
  "preference:x",
  "Preference:X",
  "preference:x ",
  "ＰＲＥＦＥＲＥＮＣＥ:x",
  "slot:y",
  "SLOT:Y",
  "lang",
];

// Equal instants spelled differently, and a few distinct ones.
const CAPTURED = [
  "2026-08-17T09:00:00+08:00",
  "2026-08-17T01:00:00Z",
  "2026-08-17T01:00:00",
  "2026-08-17T01:00:00.000000001Z",
  "2026-08-16T23:59:59.5Z",
  "2025-01-01",
];

export const SCORES = [0, 0.2, 0.35, 0.5, 0.5078125, 0.7, 0.9, 0.99, 1];

const arbScore = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...SCORES) },
  { weight: 1, arbitrary: fc.double({ min: 0, max: 1, noNaN: true }) },
);

const arbAuthority = fc.constantFrom<Authority | undefined>(
  undefined,
  "current_turn",
  "workspace_override",
  "user_default",
);

const arbConflictKey = fc.oneof(
  { weight: 2, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 3, arbitrary: fc.constantFrom(...SLOTS) },
);

interface RawCandidate {
  prefix: string;
  text: string;
  userScope: string;
  score: number;
  sourceRank: number;
  authority: Authority | undefined;
  conflictKey: string | null | undefined;
  sourceId: string;
  sourceType: string;
  capturedAt: string;
}

const arbRaw: fc.Arbitrary<RawCandidate> = fc.record({
  prefix: fc.constantFrom(...ID_PREFIXES),
  text: arbText,
  userScope: fc.oneof(
    { weight: 7, arbitrary: fc.constant(QUERY_SCOPE) },
    { weight: 3, arbitrary: fc.constantFrom(...NEAR_MISS_SCOPES) },
  ),
  score: arbScore,
  sourceRank: fc.integer({ min: 1, max: 3 }),
  authority: arbAuthority,
  conflictKey: arbConflictKey,
  sourceId: fc.constantFrom("s1", "kb:42", "a&b<c>"),
  sourceType: fc.constantFrom("chat", "note", 'x"y'),
  capturedAt: fc.constantFrom(...CAPTURED),
});

function toCandidate(r: RawCandidate, i: number): CandidateInput {
  const c: CandidateInput = {
    memoryId: `${r.prefix}-${i}`,
    text: r.text,
    userScope: r.userScope,
    score: r.score,
    sourceRank: r.sourceRank,
    provenance: {
      sourceId: r.sourceId,
      sourceType: r.sourceType,
      title: "t",
      capturedAt: r.capturedAt,
    },
  };
  if (r.authority !== undefined) c.authority = r.authority;
  if (r.conflictKey !== undefined) c.conflictKey = r.conflictKey;
  return c;
}

export const arbCandidates: fc.Arbitrary<CandidateInput[]> = fc
  .array(arbRaw, { maxLength: 10 })
  .map((raws) => raws.map(toCandidate));

/** Candidates as {@link arbCandidates} makes them, but `minLength` to `maxLength` of them. */
export function arbCandidatesSized(minLength: number, maxLength: number) {
  return fc.array(arbRaw, { minLength, maxLength }).map((raws) => raws.map(toCandidate));
}

export const arbPolicy: fc.Arbitrary<{
  minScore: number;
  topK: number;
  maxChars: number | null;
  maxTokens: number | null;
}> = fc.record({
  minScore: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(0, 0.35) },
    { weight: 2, arbitrary: fc.constantFrom(0.5, 0.5078125, 0.7, 0.99, 1) },
  ),
  topK: fc.integer({ min: 0, max: 10 }),
  maxChars: fc.oneof(
    { weight: 1, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 400 }) },
    { weight: 3, arbitrary: fc.integer({ min: 200, max: 3000 }) },
  ),
  maxTokens: fc.oneof(
    { weight: 1, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 120 }) },
    { weight: 3, arbitrary: fc.integer({ min: 50, max: 900 }) },
  ),
});

export interface GenRequest extends SelectMemoryRequest {
  userScope: string;
  policy: PolicyInput;
  candidates: CandidateInput[];
}

export const arbRequest: fc.Arbitrary<GenRequest> = fc.record({
  userScope: fc.constantFrom(...QUERY_SCOPE_SPELLINGS),
  policy: arbPolicy,
  candidates: arbCandidates,
});

/** A request together with a permutation of its candidates. */
export const arbRequestAndShuffle: fc.Arbitrary<[GenRequest, CandidateInput[]]> = arbRequest.chain(
  (req) =>
    fc.tuple(
      fc.constant(req),
      fc.shuffledSubarray(req.candidates, {
        minLength: req.candidates.length,
        maxLength: req.candidates.length,
      }),
    ),
);
