/** `promptctx demo`: the main job on the bundled example workspace, or the offline fixture. */
import type { Command } from "commander";
import { InvalidInputError } from "../../errors/index.js";
import type { RendererName } from "../../render/index.js";
import type { TokenizerName } from "../../tokens/index.js";
import { loadWorkspaceConfig, WORKSPACE_BUDGET_CHARS } from "../../workspace/index.js";
import { assemblyJson, exampleWorkspace, formatAssembly, runWorkspaceDemo } from "../assembly.js";
import { rendererOption, tokenizerOption } from "../choices.js";
import { budgetCharsFlag, budgetCharsOption, EXIT, intFlag, reportError } from "../io.js";
import { stdoutStyle } from "../terminal.js";
import { type SetExit, summaryOf } from "../verbs.js";
import { budgetFromEnv, formatDemo, runDemo } from "./segments-report.js";

interface DemoFlags {
  tokenizer: TokenizerName;
  json?: boolean;
  wide?: boolean;
  segments?: boolean;
  renderer?: RendererName;
  record?: string;
  budgetChars?: string;
  budgetTokens?: string;
}

/**
 * The demo's char budget: `--budget-chars` when given, else `fallback`; `PROMPT_BUDGET_CHARS`
 * can only tighten it.
 */
function demoBudget(flag: string | undefined, fallback: number): number {
  const chosen = budgetCharsFlag({ budgetChars: flag }) ?? fallback;
  return budgetFromEnv(process.env.PROMPT_BUDGET_CHARS, chosen);
}

/** `--budget-tokens`, checked, as the options field it sets (none without the flag). */
function tokenBudget(flag: string | undefined): { budgetTokens?: number } {
  const n = intFlag(flag, "--budget-tokens");
  return n === undefined ? {} : { budgetTokens: n };
}

/** Runs `demo`: the example workspace, or the offline ten-segment fixture with `--segments`. */
async function runDemoCommand(opts: DemoFlags): Promise<number> {
  try {
    if (opts.segments) {
      if (opts.record !== undefined) {
        throw new InvalidInputError(
          "--record records workspace assemblies; --segments plans the offline fixture only",
          "--record",
        );
      }
      const budgetChars = demoBudget(opts.budgetChars, 12000);
      const budgetTokens = tokenBudget(opts.budgetTokens);
      const result = runDemo({ budgetChars, ...budgetTokens, tokenizer: opts.tokenizer });
      process.stdout.write(
        opts.json ? `${JSON.stringify(result)}\n` : formatDemo(result, stdoutStyle(opts.wide)),
      );
    } else {
      const config = await loadWorkspaceConfig(exampleWorkspace());
      const fallback = config.budgets?.chars ?? WORKSPACE_BUDGET_CHARS;
      const out = await runWorkspaceDemo(
        {
          budgetChars: demoBudget(opts.budgetChars, fallback),
          ...tokenBudget(opts.budgetTokens),
          tokenizer: opts.tokenizer,
          ...(opts.renderer ? { renderer: opts.renderer } : {}),
        },
        opts.record === undefined ? null : (await import("../record.js")).recorderFor(opts.record),
      );
      process.stdout.write(
        opts.json ? `${assemblyJson(out)}\n` : formatAssembly(out, stdoutStyle(opts.wide)),
      );
    }
    return EXIT.ok;
  } catch (err) {
    return reportError(err, "demo");
  }
}

/** Registers `demo` on the program. */
export function registerDemoCommand(program: Command, setExit: SetExit): void {
  program
    .command("demo")
    .description(summaryOf("demo"))
    .addOption(tokenizerOption("estimate"))
    .addOption(rendererOption())
    .addOption(budgetCharsOption("total prompt char budget (default: the workspace's)"))
    .option("--budget-tokens <n>", "total prompt token budget (default: the workspace's)")
    .option("--json", "print {prompt, manifest, memoryPlan, segmentPlan} as JSON")
    .option(
      "--wide",
      "tables and text at full width (default: fitted to the terminal, else COLUMNS, else 80)",
    )
    .option(
      "--segments",
      "the offline ten-segment fixture instead: six recall candidates and the segment planner",
    )
    .option(
      "--record <file>",
      "append the demo's request (its memories included) and result to FILE as one JSON line",
    )
    .addHelpText(
      "after",
      "\nEnvironment:\n  PROMPT_BUDGET_CHARS  tighten the total prompt budget (non-negative integer; can only lower --budget-chars)",
    )
    .action(async (opts: DemoFlags) => {
      setExit(await runDemoCommand(opts));
    });
}
