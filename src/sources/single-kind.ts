/** Helpers of the in-memory sources: input parsing, id checks and the one-kind source. */
import type { z } from "zod";
import { InvalidInputError, invalidFromZod } from "../errors/index.js";
import { isBlank } from "../text/index.js";
import type { ContextSource, SlotSpec, SourceItem, SourceQuery } from "./types.js";
import { markValidated } from "./validated.js";

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

/**
 * A source serving exactly one kind, from a function evaluated at fetch time. With
 * `validated`, `produce` builds its items from data validated when it came in, so they are
 * valid by construction and the assembler does not parse them again; `version` then gives
 * the data's current version token (see {@link markValidated}).
 */
export function singleKindSource(
  id: string,
  kind: string,
  produce: (slot: SlotSpec, query: SourceQuery) => SourceItem[],
  validated = true,
  version?: () => object,
): ContextSource {
  const sid = checkSourceId(id);
  return {
    id: sid,
    supports: (k) => k === kind,
    fetch: (slot, query) => {
      if (slot.kind !== kind) return [];
      const items = produce(slot, query);
      return validated ? markValidated(items, version?.() ?? null) : items;
    },
  };
}
