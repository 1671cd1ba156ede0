/** Helpers of the in-memory sources: input parsing, id checks and the one-kind source. */
import type { z } from "zod";
import { InvalidInputError, invalidFromZod } from "../errors/index.js";
import { isBlank } from "../text/index.js";
import type { ContextSource, SlotSpec, SourceItem, SourceQuery } from "./types.js";
import { declareUpfrontVersion, markValidated } from "./validated.js";

/** `value` parsed by `schema`; invalid input is `InvalidInputError` under `path`. */
export function parse<T>(schema: z.ZodType<T>, value: unknown, path: Array<string | number>): T {
  const r = schema.safeParse(value);
  if (!r.success) throw invalidFromZod(r.error, path);
  return r.data;
}

/** `id` when it is a non-blank string, else `InvalidInputError` (path `id`). */
export function checkSourceId(id: string): string {
  if (typeof id !== "string" || isBlank(id)) {
    throw new InvalidInputError("source id must not be blank", "id");
  }
  return id;
}

/** Adds `value` to `seen`; a value seen before is `InvalidInputError` under `path`. */
export function rejectDuplicate(
  seen: Set<string>,
  value: string,
  what: string,
  path: Array<string | number>,
) {
  if (seen.has(value)) throw new InvalidInputError(`duplicate ${what} "${value}"`, path);
  seen.add(value);
}

/** The version token of a one-kind source's data (see {@link markValidated}). */
export interface SourceVersion {
  /** The data's current token. */
  current: () => object;
  /**
   * Whether `current()` is right before `produce` runs (the items depend on nothing but
   * that data, not on the slot or the query): the assembler may then skip a fetch whose
   * token it already holds items for. False when `produce` itself reads the data and
   * settles the token (the planner's task state).
   */
  upfront: boolean;
}

/**
 * A source serving exactly one kind, from a function evaluated at fetch time. With
 * `validated`, `produce` builds its items from data validated when it came in, so they are
 * valid by construction, with unique ids (the data's keys were checked when it came in),
 * and the assembler does not parse or check them again; `version` then gives the data's
 * version token.
 */
export function singleKindSource(
  id: string,
  kind: string,
  produce: (slot: SlotSpec, query: SourceQuery) => SourceItem[],
  validated = true,
  version?: SourceVersion,
): ContextSource {
  const sid = checkSourceId(id);
  const source: ContextSource = {
    id: sid,
    supports: (k) => k === kind,
    fetch: (slot, query) => {
      if (slot.kind !== kind) return [];
      const items = produce(slot, query);
      return validated ? markValidated(items, version?.current() ?? null, true) : items;
    },
  };
  if (!validated || version === undefined || !version.upfront) return source;
  const current = version.current;
  return declareUpfrontVersion(source, (k) => (k === kind ? current() : null));
}
