/**
 * The fill step's memo (a `PartMemo`): an unchanged source is not asked again. It is kept
 * for the life of the process, for every assembly (a source object is the key, held
 * weakly), whether or not the caller keeps a layer memo.
 */
import type { ContextSource } from "../../sources/index.js";
import { upfrontVersion } from "../../sources/validated.js";
import { deepFreeze } from "../../text/index.js";
import type { FillPart, HeldPart, PartMemo } from "../fill.js";

/**
 * Per source and slot kind, what the assembler holds from a source that declares its
 * version upfront (`declareUpfrontVersion`): the token it last fetched under and, once
 * that token has been fetched twice in a row, the second fetch's part. While the source's
 * token stays the same, a fetch would return equal items, so that part is reused and the
 * source is not asked: its items are neither copied nor wrapped again, and stay the same
 * objects from one assembly to the next. They are frozen before any renderer sees them,
 * so nothing downstream can alter what a later assembly reads. Data that changes between
 * every two assemblies (a task buffer during a session) is never kept, so it never pays
 * for the freezing.
 */
const keptParts = new WeakMap<ContextSource, Map<string, Kept>>();

interface Kept {
  version: object;
  /** The part to reuse; null after the first fetch under `version`. */
  part: FillPart | null;
}

/**
 * What is held for one source and kind: the token its next fetch would carry (null: not
 * known upfront), what was kept, and the kept part a fetch now would equal (else null).
 */
class Held implements HeldPart {
  /** An instance kept for the life of the class: see "Object shapes" in docs/performance.md. */
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: held only to keep the shape alive
  static readonly #shape = new Held({} as ContextSource, "", null, undefined);
  readonly reusable: FillPart | null;

  constructor(
    private readonly source: ContextSource,
    private readonly kind: string,
    private readonly upfront: object | null,
    private readonly kept: Kept | undefined,
  ) {
    this.reusable = kept?.part && kept.version === upfront ? kept.part : null;
  }

  // A part fetched under the token known upfront is kept from its second fetch in a row.
  fetched(part: FillPart): void {
    const upfront = this.upfront;
    if (upfront !== null && part.version === upfront) {
      keep(this.source, this.kind, upfront, this.kept?.version === upfront ? part : null);
    }
  }
}

function keep(source: ContextSource, kind: string, version: object, part: FillPart | null) {
  if (part !== null) for (const s of part.items) deepFreeze(s.item);
  let byKind = keptParts.get(source);
  if (byKind === undefined) {
    byKind = new Map();
    keptParts.set(source, byKind);
  }
  byKind.set(kind, { version, part });
}

/**
 * The process's kept parts: each source's reusable part while its version token is
 * unchanged (see {@link keptParts}).
 *
 * @example
 * await fillOneSlot(slot, sources, query, 2000, { deadlines, clock, timings, parts: KEPT_PARTS });
 */
export const KEPT_PARTS: PartMemo = {
  held(source, kind) {
    const upfront = upfrontVersion(source, kind);
    const kept = upfront === null ? undefined : keptParts.get(source)?.get(kind);
    return new Held(source, kind, upfront, kept);
  },
};
