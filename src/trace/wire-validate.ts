/** Receiver side of the wire contract (spec 07): version, shape, then the semantic checks. */
import { sha256Hex, versionId } from "../cache/index.js";
import { InvalidInputError, invalidFromZod } from "../errors/index.js";
import { cpLength, cpOffsets } from "../text/index.js";
import {
  checkWireVersion,
  type WireContract,
  WireContractSchema,
  type WireLayer,
} from "./wire-schema.js";

/** Resolved offset of an anchor in a body of `bodyChars` code points. */
export function anchorOffset(
  anchor: { afterLayer: string | null; atEnd: boolean },
  layers: readonly WireLayer[],
  bodyChars: number,
): number | null {
  if (anchor.atEnd) return bodyChars;
  const at = layers.findIndex((l) => l.id === anchor.afterLayer);
  if (at < 0) return null;
  for (let i = at; i >= 0; i--) {
    const span = (layers[i] as WireLayer).span;
    if (span !== null) return span.end;
  }
  return 0;
}

/** Hash and budget arithmetic of the body; returns its length in code points. */
function checkBody(c: WireContract): number {
  const body = c.assembledContext;
  if (sha256Hex(body) !== c.promptVersion) {
    throw new InvalidInputError("does not match the SHA-256 of assembledContext", "promptVersion");
  }
  const bodyChars = cpLength(body);
  if (c.budget.bodyChars !== bodyChars) {
    throw new InvalidInputError(
      `is ${c.budget.bodyChars}; assembledContext has ${bodyChars} code points`,
      "budget.bodyChars",
    );
  }
  const { contextWindow, responseReserve, total, bodyTokens } = c.budget;
  if (total !== contextWindow - c.tailReserve - responseReserve) {
    throw new InvalidInputError(
      `must equal contextWindow − tailReserve − responseReserve (${contextWindow - c.tailReserve - responseReserve})`,
      "budget.total",
    );
  }
  if (bodyTokens > total) {
    throw new InvalidInputError(`${bodyTokens} exceeds budget.total ${total}`, "budget.bodyTokens");
  }
  return bodyChars;
}

/** Unique ids; spans of the included layers in order, inside the body, matching their hashes. */
function checkLayers(c: WireContract, bodyChars: number): void {
  const body = c.assembledContext;
  const offsets = cpOffsets(body);
  const ids = new Set<string>();
  let prevEnd = 0;
  c.layerManifest.forEach((l, i) => {
    if (ids.has(l.id)) {
      throw new InvalidInputError(`duplicate layer id ${JSON.stringify(l.id)}`, [
        "layerManifest",
        i,
        "id",
      ]);
    }
    ids.add(l.id);
    const where = ["layerManifest", i, "span"];
    if ((l.status === "included") !== (l.span !== null)) {
      throw new InvalidInputError("an included layer has a span, any other layer null", where);
    }
    if (l.span === null) return;
    if (l.span.start < prevEnd || l.span.end > bodyChars) {
      throw new InvalidInputError(
        "spans must be in display order, disjoint and inside assembledContext",
        where,
      );
    }
    if (l.chars !== l.span.end - l.span.start) {
      throw new InvalidInputError("chars must equal the span's length", [
        "layerManifest",
        i,
        "chars",
      ]);
    }
    const content = body.slice(offsets[l.span.start], offsets[l.span.end]);
    if (versionId(content) !== l.versionId) {
      throw new InvalidInputError("does not match the layer's content in assembledContext", [
        "layerManifest",
        i,
        "versionId",
      ]);
    }
    prevEnd = l.span.end;
  });
}

/** Unique names, each resolving to its stated offset; reserves within `tailReserve`. */
function checkAnchors(c: WireContract, bodyChars: number): void {
  const names = new Set<string>();
  let reserved = 0;
  c.anchors.forEach((a, i) => {
    if (names.has(a.name)) {
      throw new InvalidInputError(`duplicate anchor name ${JSON.stringify(a.name)}`, [
        "anchors",
        i,
        "name",
      ]);
    }
    names.add(a.name);
    if ((a.afterLayer === null) === !a.atEnd) {
      throw new InvalidInputError("give exactly one of afterLayer and atEnd", ["anchors", i]);
    }
    const offset = anchorOffset(a, c.layerManifest, bodyChars);
    if (offset === null) {
      throw new InvalidInputError(`no layer ${JSON.stringify(a.afterLayer)} in layerManifest`, [
        "anchors",
        i,
        "afterLayer",
      ]);
    }
    if (offset !== a.offset) {
      throw new InvalidInputError(`must be ${offset} (where the anchor resolves)`, [
        "anchors",
        i,
        "offset",
      ]);
    }
    reserved += a.reserveTokens;
  });
  if (reserved > c.tailReserve) {
    throw new InvalidInputError(
      `the anchors reserve ${reserved} tokens; tailReserve is ${c.tailReserve}`,
      "anchors",
    );
  }
}

/** The semantic checks of a shape-valid contract; throws invalid input naming the field. */
function checkSemantics(c: WireContract): void {
  const bodyChars = checkBody(c);
  checkLayers(c, bodyChars);
  checkAnchors(c, bodyChars);
}

/** Version first (a future major may have any shape), then shape, then semantics. */
export function validateWire(input: unknown): WireContract {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new InvalidInputError("the wire contract must be a JSON object");
  }
  checkWireVersion((input as Record<string, unknown>).assemblerVersion);
  const parsed = WireContractSchema.safeParse(input);
  if (!parsed.success) throw invalidFromZod(parsed.error);
  checkSemantics(parsed.data);
  return parsed.data;
}

/**
 * Validates a received contract: JSON text or an already-parsed value. An unknown major
 * version throws `unsupported_version` (path `assemblerVersion`); a bad shape or an
 * inconsistency throws invalid input with the field path (`layerManifest[2].versionId`).
 * Unknown fields (from a newer minor version) are dropped.
 *
 * @example const contract = parseWireContract(await request.text());
 */
export function parseWireContract(json: unknown): WireContract {
  let value = json;
  if (typeof json === "string") {
    try {
      value = JSON.parse(json);
    } catch (err) {
      throw new InvalidInputError(
        `the wire contract is not valid JSON: ${err instanceof Error ? err.message : "parse error"}`,
      );
    }
  }
  return validateWire(value);
}
