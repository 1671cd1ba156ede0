/** Line reading for JSONL import: strings or byte/string streams, any chunking. */
import type { JsonlInput } from "./types.js";

/** One line of input: 1-based number and text without its line break. */
export interface NumberedLine {
  line: number;
  text: string;
}

async function* chunksOf(input: JsonlInput): AsyncGenerator<string> {
  if (typeof input === "string") {
    yield input;
    return;
  }
  const decoder = new TextDecoder("utf-8");
  for await (const chunk of input as AsyncIterable<string | Uint8Array>) {
    yield typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
  }
  const tail = decoder.decode();
  if (tail !== "") yield tail;
}

/**
 * Splits input into lines on `\n` (a trailing `\r` is dropped, a leading BOM ignored).
 * A final line without a newline is still a line; an empty last line is not.
 */
export async function* readLines(input: JsonlInput): AsyncGenerator<NumberedLine> {
  let carry = "";
  let line = 0;
  let first = true;
  for await (let chunk of chunksOf(input)) {
    if (first && chunk !== "") {
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
      first = false;
    }
    let start = 0;
    let nl = chunk.indexOf("\n");
    while (nl !== -1) {
      const piece = carry + chunk.slice(start, nl);
      carry = "";
      line++;
      yield { line, text: piece.endsWith("\r") ? piece.slice(0, -1) : piece };
      start = nl + 1;
      nl = chunk.indexOf("\n", start);
    }
    carry += chunk.slice(start);
  }
  if (carry !== "") {
    line++;
    yield { line, text: carry.endsWith("\r") ? carry.slice(0, -1) : carry };
  }
}
