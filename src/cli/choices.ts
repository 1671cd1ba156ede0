/**
 * The one place for the flags whose values are a fixed list (not a verb): the choices are
 * read from the tables that define them (`TOKENIZER_NAMES`, `RENDERER_NAMES`), so a new
 * tokenizer or renderer is offered by every verb without touching one.
 */
import { Option } from "commander";
import { RENDERER_NAMES } from "../render/index.js";
import { TOKENIZER_NAMES } from "../tokens/index.js";

/**
 * `--tokenizer <name>`, one of the built-in token counters; `fallback`: its default.
 *
 * @example program.addOption(tokenizerOption("estimate"))
 */
export function tokenizerOption(fallback?: (typeof TOKENIZER_NAMES)[number]): Option {
  const option = new Option("--tokenizer <name>", "token counter");
  if (fallback !== undefined) option.default(fallback);
  return option.choices([...TOKENIZER_NAMES]);
}

/**
 * `--renderer <name>`, one of the built-in slot renderers; `fallback`: its default.
 *
 * @example program.addOption(rendererOption())
 */
export function rendererOption(fallback?: (typeof RENDERER_NAMES)[number]): Option {
  const option = new Option("--renderer <name>", "slot renderer");
  if (fallback !== undefined) option.default(fallback);
  return option.choices([...RENDERER_NAMES]);
}
