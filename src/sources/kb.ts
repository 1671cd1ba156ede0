/**
 * Knowledge-base chunks (docs/sources.md): loading `*.jsonl`, citation anchors, the tier order
 * and the budget cascade, and the `kb` source.
 *
 * Choices:
 * - `kind` decides the tier; `isGolden` must agree with it (`isGolden === (kind ===
 *   "golden")`), a contradicting line is reported, not guessed.
 * - `docId`/`chunkId` contain no whitespace and no `[` or `]` (they sit inside the
 *   citation anchor the model must copy); `docId` also has no `#` (the `docId#chunkId`
 *   item id and sourceRef stay unambiguous).
 * - Every tier is ordered by score desc, then docId, chunkId, content (code points).
 * - Budgets count code points of the rendered text (lines joined by `\n`).
 */
import { join } from "node:path";
import { z } from "zod";
import { InvalidInputError, invalidFromZod } from "../errors/index.js";
import {
  confinedRoots,
  entryInside,
  listConfined,
  PATH_REFUSED,
  REFUSED,
  readConfined,
} from "../files/index.js";
import { compareCodePoints, cpLength, isBlank, textString, WS_CLASS } from "../text/index.js";
import type { ContextSource, SourceItem } from "./types.js";

// ---------------------------------------------------------------------------------------
// schema

const KB_KINDS = ["golden", "hybrid", "correction"] as const;
/** A chunk tier, most valuable first. */
export type KbKind = (typeof KB_KINDS)[number];

const ID_CHARS = new RegExp(`^[^${WS_CLASS}\\[\\]]+$`, "u");
const anchorId = textString.regex(ID_CHARS, {
  message: "must be non-empty without whitespace, '[' or ']'",
});

/** One knowledge-base chunk (one JSONL line). Unknown fields are dropped. */
export const KbChunkSchema = z
  .object({
    docId: anchorId.refine((s) => !s.includes("#"), { message: "must not contain '#'" }),
    chunkId: anchorId,
    content: textString.refine((s) => !isBlank(s), { message: "must not be blank" }),
    score: z.number().min(0).max(1),
    isGolden: z.boolean(),
    source: textString,
    kind: z.enum(KB_KINDS),
  })
  .refine((c) => c.isGolden === (c.kind === "golden"), {
    message: "must be true exactly when kind is golden",
    path: ["isGolden"],
  });
export type KbChunk = z.infer<typeof KbChunkSchema>;

/** A load problem: `line` is 1-based (0 = the whole file). */
export interface KbIssue {
  file: string;
  line: number;
  reason: string;
}

/** What {@link loadKbDir} read. */
export interface KbLoad {
  chunks: KbChunk[];
  issues: KbIssue[];
}

// ---------------------------------------------------------------------------------------
// loading

/**
 * Reads every `*.jsonl` file of `dir` (name order by code point, regular files only),
 * one JSON object per line. Blank lines are skipped; a bad line (JSON or schema) is
 * reported with its file and 1-based line and skipped; a repeated (docId, chunkId) is
 * reported and the first occurrence kept. A missing directory loads nothing.
 *
 * The directory and every file are read through the one confinement rule
 * (files/confine.ts) inside `allowed` (default: `dir` itself; a workspace passes its
 * root): a file that is dangling or leads out is one `path_refused` issue (line 0), the
 * same whether its target exists or not, and its content is never read nor parsed.
 *
 * @example const { chunks, issues } = await loadKbDir("ws/.promptctx/kb");
 */
export async function loadKbDir(dir: string, allowed: readonly string[] = [dir]): Promise<KbLoad> {
  const chunks: KbChunk[] = [];
  const issues: KbIssue[] = [];
  const roots = await confinedRoots(allowed);
  const refused = (file: string): KbIssue => ({
    file,
    line: 0,
    reason: `${PATH_REFUSED}: ${REFUSED}`,
  });
  const list = await listConfined(dir, roots);
  if (!list.ok) {
    return { chunks, issues: (await entryInside(dir, roots)) ? [refused(dir)] : [] };
  }
  const names = list.names.filter((n) => n.endsWith(".jsonl")).sort(compareCodePoints);
  const firstSeen = new Map<string, string>();
  for (const name of names) {
    const file = join(dir, name);
    const read = await readConfined(file, roots);
    if (!read.ok) {
      // A directory named *.jsonl is skipped, as before; anything else refused is said once.
      if (read.why !== "not_a_file") issues.push(refused(file));
      continue;
    }
    let text = read.bytes.toString("utf8");
    if (text.startsWith("\uFEFF")) text = text.slice(1);
    const lines = text.split("\n");
    lines.forEach((raw, i) => {
      const line = i + 1;
      const body = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
      if (isBlank(body)) return;
      let value: unknown;
      try {
        value = JSON.parse(body);
      } catch (err) {
        issues.push({ file, line, reason: `invalid JSON: ${(err as Error).message}` });
        return;
      }
      const parsed = KbChunkSchema.safeParse(value);
      if (!parsed.success) {
        issues.push({ file, line, reason: invalidFromZod(parsed.error).message });
        return;
      }
      const c = parsed.data;
      const key = `${c.docId}\u0000${c.chunkId}`;
      const first = firstSeen.get(key);
      if (first !== undefined) {
        issues.push({
          file,
          line,
          reason: `duplicate chunk (docId "${c.docId}", chunkId "${c.chunkId}"), first at ${first}`,
        });
        return;
      }
      firstSeen.set(key, `${file}:${line}`);
      chunks.push(c);
    });
  }
  return { chunks, issues };
}

// ---------------------------------------------------------------------------------------
// order and rendering

/** The anchor the model must cite. @example citationAnchor({ docId: "d1", chunkId: "c3" }) // "[doc:d1 chunk:c3]" */
export function citationAnchor(c: Pick<KbChunk, "docId" | "chunkId">): string {
  return `[doc:${c.docId} chunk:${c.chunkId}]`;
}

/** One rendered chunk line: `ANCHOR CONTENT`. */
export function kbLine(c: KbChunk): string {
  return `${citationAnchor(c)} ${c.content}`;
}

const TIER: Record<KbKind, number> = { golden: 0, hybrid: 1, correction: 2 };

function compareChunks(a: KbChunk, b: KbChunk): number {
  return (
    TIER[a.kind] - TIER[b.kind] ||
    b.score - a.score ||
    compareCodePoints(a.docId, b.docId) ||
    compareCodePoints(a.chunkId, b.chunkId) ||
    compareCodePoints(a.content, b.content) ||
    compareCodePoints(a.source, b.source)
  );
}

/**
 * Golden first, then hybrid, then correction few-shot examples; within a tier score desc,
 * then docId, chunkId (code points). Returns a new array.
 */
export function orderChunks(chunks: readonly KbChunk[]): KbChunk[] {
  return [...chunks].sort(compareChunks);
}

/** The outcome of the budget cascade. */
export interface KbPlan {
  /** Chunks rendered, in order. */
  included: KbChunk[];
  /** Tiers that had chunks and lost all of them, least valuable first. */
  skippedLevels: KbKind[];
  /** Every chunk left out, in cascade order, with why. */
  dropped: Array<{ chunkId: string; docId: string; reason: string }>;
  /** The included chunks as `ANCHOR CONTENT` lines joined by `\n` (`""` when none). */
  text: string;
  /** Code points of `text`. */
  chars: number;
}

/**
 * The budget cascade: render all; over budget → skip every correction, then every
 * hybrid, then drop golden chunks one at a time from the lowest-scored (last in order)
 * until the rest fits. Chunks are atomic: never cut. `null` = no budget.
 *
 * @example planKb(chunks, 200).skippedLevels // ["correction"] when only the corrections had to go
 */
export function planKb(chunks: readonly KbChunk[], budgetChars: number | null): KbPlan {
  if (budgetChars !== null && (!Number.isSafeInteger(budgetChars) || budgetChars < 0)) {
    throw new InvalidInputError(
      "budgetChars must be a non-negative integer or null",
      "budgetChars",
    );
  }
  const ordered = orderChunks(chunks);
  const lens = new Map(ordered.map((c) => [c, cpLength(kbLine(c))]));
  const size = (list: readonly KbChunk[]) =>
    list.reduce((n, c) => n + (lens.get(c) as number), Math.max(0, list.length - 1));
  const fits = (list: readonly KbChunk[]) => budgetChars === null || size(list) <= budgetChars;

  let included = ordered;
  const skippedLevels: KbKind[] = [];
  const dropped: KbPlan["dropped"] = [];
  for (const level of ["correction", "hybrid"] as const) {
    if (fits(included)) break;
    const out = included.filter((c) => c.kind === level);
    if (out.length === 0) continue;
    included = included.filter((c) => c.kind !== level);
    skippedLevels.push(level);
    for (const c of out) {
      dropped.push({ chunkId: c.chunkId, docId: c.docId, reason: `level ${level} skipped` });
    }
  }
  if (!fits(included)) {
    // Only golden chunks remain: drop from the lowest-scored (the end) until it fits.
    const kept = [...included];
    let total = size(kept);
    while (kept.length > 0 && budgetChars !== null && total > budgetChars) {
      const c = kept.pop() as KbChunk;
      total -= (lens.get(c) as number) + (kept.length > 0 ? 1 : 0);
      dropped.push({
        chunkId: c.chunkId,
        docId: c.docId,
        reason: "golden dropped: over budget (lowest score first)",
      });
    }
    if (kept.length === 0 && included.length > 0) skippedLevels.push("golden");
    included = kept;
  }
  const text = included.map(kbLine).join("\n");
  return { included, skippedLevels, dropped, text, chars: cpLength(text) };
}

/** `kb:DOC_ID#CHUNK_ID` — the manifest's chunk id. */
export function kbSourceRef(c: Pick<KbChunk, "docId" | "chunkId">): string {
  return `kb:${c.docId}#${c.chunkId}`;
}

/** Cascade level of each tier: golden 0 (cut last, item by item), hybrid 1, correction 2. */
export const KB_CASCADE_LEVEL: Readonly<Record<KbKind, number>> = TIER;

/**
 * A source of kind `kb` over validated chunks (a duplicate (docId, chunkId) or an invalid
 * chunk throws `InvalidInputError`). Items are every chunk in {@link orderChunks} order:
 * id `DOC#CHUNK`, text `ANCHOR CONTENT`, category = kind, rank = position, `cascadeLevel`
 * = {@link KB_CASCADE_LEVEL} of the kind, sourceRef `kb:DOC#CHUNK`. The source applies no
 * budget: the assembler runs the cascade (correction skipped first, then hybrid, golden
 * cut last) against the slot's budget and then against the room the global plan leaves
 * the layer, so every chunk gets a decision with a reason in the manifest.
 *
 * Items carry no `score`: the assembler ranks score before rank, which would lift a 0.9
 * hybrid above a 0.5 golden chunk; `rank` carries the spec order instead.
 */
export function kbSource(chunks: readonly KbChunk[], id = "kb"): ContextSource {
  if (typeof id !== "string" || isBlank(id)) {
    throw new InvalidInputError("source id must not be blank", "id");
  }
  const parsed = z.array(KbChunkSchema).safeParse(chunks);
  if (!parsed.success) throw invalidFromZod(parsed.error, ["chunks"]);
  const valid = parsed.data;
  const seen = new Set<string>();
  valid.forEach((c, i) => {
    const key = `${c.docId}\u0000${c.chunkId}`;
    if (seen.has(key)) {
      throw new InvalidInputError(`duplicate chunk (docId "${c.docId}", chunkId "${c.chunkId}")`, [
        "chunks",
        i,
      ]);
    }
    seen.add(key);
  });
  const items: SourceItem[] = orderChunks(valid).map((c, rank) => ({
    id: `${c.docId}#${c.chunkId}`,
    text: kbLine(c),
    category: c.kind,
    rank,
    cascadeLevel: KB_CASCADE_LEVEL[c.kind],
    sourceRef: kbSourceRef(c),
  }));
  return {
    id,
    supports: (kind) => kind === "kb",
    fetch: (slot): SourceItem[] => (slot.kind === "kb" ? items.map((i) => ({ ...i })) : []),
  };
}
