/**
 * The entries of a stop-word data block: whitespace-separated words; `#` starts a comment
 * that runs to the end of the line; duplicates are kept out.
 *
 * @example words("a an  # articles\n the") // ["a", "an", "the"]
 */
export function words(block: string): string[] {
  const out = new Set<string>();
  for (const line of block.split("\n")) {
    const hash = line.indexOf("#");
    for (const w of (hash === -1 ? line : line.slice(0, hash)).split(/\s+/)) {
      if (w !== "") out.add(w);
    }
  }
  return [...out];
}
