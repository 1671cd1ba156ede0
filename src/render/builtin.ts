/** The built-in renderers by name (the two locales and the tagged renderer). */
import { InvalidInputError } from "../errors/index.js";
import { createHeadingRenderer, LOCALES } from "./heading.js";
import { taggedRenderer } from "./tagged.js";
import type { SlotRenderer } from "./types.js";

/** Names of the built-in renderers. */
export const RENDERER_NAMES = ["en", "zh-CN", "tagged"] as const;
export type RendererName = (typeof RENDERER_NAMES)[number];

// Built on first use, not at import: the heading renderers validate their locale tables.
let builtin: Readonly<Record<RendererName, SlotRenderer>> | null = null;

function builtins(): Readonly<Record<RendererName, SlotRenderer>> {
  builtin ??= Object.freeze({
    en: createHeadingRenderer("en", LOCALES.en),
    "zh-CN": createHeadingRenderer("zh-CN", LOCALES["zh-CN"]),
    tagged: taggedRenderer,
  });
  return builtin;
}

/**
 * A built-in renderer by name; an unknown name is `InvalidInputError` with path `renderer`.
 *
 * @example getRenderer("zh-CN").renderSlot({ kind: "profile" }, items, { userScope: "u1" })
 */
export function getRenderer(name: RendererName | (string & {})): SlotRenderer {
  if (typeof name === "string" && (RENDERER_NAMES as readonly string[]).includes(name)) {
    return builtins()[name as RendererName];
  }
  throw new InvalidInputError(
    `unknown renderer "${String(name)}" (expected one of ${RENDERER_NAMES.join(", ")})`,
    "renderer",
  );
}
