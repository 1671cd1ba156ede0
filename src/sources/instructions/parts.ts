/**
 * The data of an instruction chain (chain.ts): its parts (one per file, with
 * provenance) and its issues (what kept a file out, or cut it). The walk produces them,
 * the total cap cuts them, the manifest reports them; this file imports nothing.
 */

/** One file of the chain, with its provenance. */
export interface InstructionPart {
  /** Relative to `stopDir` (with `/`) when inside it, else absolute. */
  path: string;
  /** The lexical absolute path the file was reached by. */
  absolutePath: string;
  /** First 16 hex digits of the SHA-256 of the file's bytes (the whole file). */
  sha256: string;
  /** UTF-8 bytes of `content`. */
  bytes: number;
  /** The kept text (BOM dropped; cut at a character boundary when `truncated`). */
  content: string;
  /** `path` of the importing file, `null` for chain files. */
  importedFrom: string | null;
  /** 0 for chain files, import depth otherwise. */
  depth: number;
  /** Whether `content` was cut by the per-file or the total cap. */
  truncated: boolean;
}

export type InstructionIssueKind =
  | "unreadable"
  | "cycle"
  | "depth_exceeded"
  | "file_cap"
  | "total_cap"
  | "unresolved_import"
  | "not_a_file"
  | "duplicate"
  | "path_refused";

/** Something that kept (part of) a file out of the chain. Never fatal. */
export interface InstructionIssue {
  /** The file concerned, shown like {@link InstructionPart.path}. */
  path: string;
  kind: InstructionIssueKind;
  detail: string;
}

/** What the manifest says of the chain behind a slot: every file skipped or cut, and why. */
export interface InstructionReport {
  /** The slot kind the report belongs to (`instructions`). */
  slot: string;
  issues: InstructionIssue[];
}

export interface InstructionChain {
  /** Farthest first, each import right after its importer. */
  parts: InstructionPart[];
  /** In the order met. */
  issues: InstructionIssue[];
  /** The parts rendered with file headers (see the module notes). */
  text: string;
  /** Sum of the parts' `bytes`. */
  totalBytes: number;
}
