/**
 * `promptctx check-draft --red-lines FILE [--input FILE] [--json] [--max-draft-chars N]`:
 * the red-line check of docs/manifest-wire-guard.md over a draft reply.
 *
 * - The red-lines file is JSON: an array of red lines `{id, severity: "block" | "warn" |
 *   "review", literal | pattern}` (the `redLines` of a skill, written as JSON). SKILL.md
 *   files are not read here. Every line is validated and every regex statically checked at
 *   load; a bad one is invalid input naming it (`redLines[2].pattern`).
 * - The draft is the raw text of `--input FILE` or stdin (UTF-8, not JSON).
 * - Output: an aligned table for people, or with `--json` the check result of
 *   `checkDraft` (`{violations, checkedChars, truncated, incomplete, capped, redLineIds,
 *   blocked, flagged}`) on one line.
 * - Exit codes: 0 when no `block` violation was found (`warn` and `review` violations
 *   still exit 0 — `review` ones are shown as flagged), 4 when at least one `block`
 *   violation was found or the draft could not be checked in full (over
 *   `--max-draft-chars`, or over the scan budget: fail closed), 2 on invalid input
 *   (unreadable file, bad JSON, bad red line), with the error object on stdout and one
 *   line on stderr as for every verb.
 */
import { readFile } from "node:fs/promises";
import { type Command, Option } from "commander";
import { InvalidInputError, nodeErrorCode } from "../errors/index.js";
import { checkDraft, compileRedLines, type DraftCheck } from "../trace/index.js";
import { EXIT, parseJson, readInput, reportError } from "./io.js";
import { fitText, renderTable, type TableStyle, type Tone } from "./table.js";
import { stdoutStyle } from "./terminal.js";
import { summaryOf } from "./verbs.js";

/** Exit code of `check-draft` when a `block` red line was crossed. */
export const EXIT_BLOCKED = 4;

interface CheckDraftFlags {
  redLines: string;
  input?: string;
  json?: boolean;
  maxDraftChars?: string;
  wide?: boolean;
}

const TONE: Record<string, Tone> = { block: "bad", warn: null, review: "muted" };

/** The people's view of a check: one row per violation, then a summary line. */
export function formatDraftCheck(result: DraftCheck, style: TableStyle): string {
  const lines: string[] = [];
  if (result.violations.length > 0) {
    lines.push(
      renderTable(
        result.violations,
        [
          { header: "SEVERITY", cell: (v) => v.severity, tone: (v) => TONE[v.severity] ?? null },
          { header: "RED LINE", cell: (v) => v.redLineId, whole: true },
          { header: "SPAN", cell: (v) => `${v.span.start}-${v.span.end}`, align: "right" },
          { header: "FLAG", cell: (v) => (v.flagged ? "review" : "") },
          { header: "EXCERPT", cell: (v) => v.excerpt, elastic: true },
        ],
        style,
      ).trimEnd(),
    );
  }
  const by = (s: string) => result.violations.filter((v) => v.severity === s).length;
  const n = result.violations.length;
  lines.push(
    n === 0
      ? `no red-line violations (checked ${result.checkedChars} chars)`
      : `${n} violation${n === 1 ? "" : "s"} (${by("block")} block, ${by("warn")} warn, ${by("review")} review); checked ${result.checkedChars} chars`,
  );
  if (result.incomplete !== null) {
    lines.push(
      `withheld: the draft could not be checked in full (${result.incomplete}); it must not be sent`,
    );
  }
  if (result.capped.length > 0) {
    lines.push(`capped (more matches not listed): ${result.capped.join(", ")}`);
  }
  return `${fitText(lines.join("\n"), style)}\n`;
}

async function readRedLines(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    const reason = nodeErrorCode(err, "unreadable");
    throw new InvalidInputError(
      `cannot read red-lines file ${JSON.stringify(file)} (${reason})`,
      "--red-lines",
    );
  }
  return parseJson(text, "the red-lines file");
}

function positiveFlag(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(value.trim())) {
    throw new InvalidInputError(
      `${flag} must be a positive integer, got ${JSON.stringify(value)}`,
      flag,
    );
  }
  return Number(value.trim());
}

/**
 * Mounts `check-draft` on a commander program; `setExit` receives the exit code.
 *
 * @example registerCheckDraftCommand(program, (code) => { exitCode = code; });
 */
export function registerCheckDraftCommand(program: Command, setExit: (code: number) => void): void {
  program
    .command("check-draft")
    .description(summaryOf("check-draft"))
    .requiredOption(
      "--red-lines <file>",
      "JSON array of red lines {id, severity, literal | pattern}",
    )
    .option("--input <file>", "the draft text (default: stdin)")
    .option("--json", "print the check result as JSON")
    .option(
      "--wide",
      "table and text at full width (default: fitted to the terminal, else COLUMNS, else 80)",
    )
    .addOption(
      new Option("--max-draft-chars <n>", "withhold, unchecked, a longer draft").default(
        undefined,
        "200000",
      ),
    )
    .addHelpText(
      "after",
      "\nExit codes: 0 no block violation (warn/review are reported, review flagged), 4 block violation or draft not checkable in full, 2 invalid input.",
    )
    .action(async (opts: CheckDraftFlags) => {
      try {
        const maxDraftChars = positiveFlag(opts.maxDraftChars, "--max-draft-chars");
        const redLines = compileRedLines(await readRedLines(opts.redLines), "redLines");
        const draft = await readInput(opts.input);
        const result = checkDraft(
          draft,
          redLines,
          maxDraftChars !== undefined ? { maxDraftChars } : {},
        );
        process.stdout.write(
          opts.json
            ? `${JSON.stringify(result)}\n`
            : formatDraftCheck(result, stdoutStyle(opts.wide)),
        );
        setExit(result.blocked ? EXIT_BLOCKED : EXIT.ok);
      } catch (err) {
        setExit(reportError(err, "check-draft"));
      }
    });
}
