/**
 * `promptctx memory list|show|history|forget|approve`: reading, correcting and erasing the
 * memories of one scope (docs/surfaces.md). Every verb names its scope (`--user`); another
 * scope's id is answered exactly as an id that does not exist. Text for people, `--json`
 * for programs.
 */
import type { Command } from "commander";
import { InvalidInputError, PromptctxError } from "../../errors/index.js";
import type { EntryPage, ForgetTarget, MemoryEntry, MemoryVersion } from "../../store/index.js";
import { EXIT, reportError } from "../io.js";
import { listFlag, numberFlag, openExisting, type StoreFlags, storeOptions } from "./flags.js";

/** No memory of that id in the scope (exit 2, path `--id`). */
export class MemoryNotFoundError extends PromptctxError {
  constructor(memoryId: string, userScope: string) {
    super(
      "not_found",
      `no memory ${JSON.stringify(memoryId)} in scope ${JSON.stringify(userScope)}`,
      "--id",
    );
    this.name = "MemoryNotFoundError";
  }
}

interface ScopeOpts extends StoreFlags {
  user: string;
  json?: boolean;
}

interface ListOpts extends ScopeOpts {
  status: string;
  limit: string;
  after?: string;
  kinds?: string;
  categories?: string;
}

/** One line of a memory in text output: id, status (and rule), version, content. */
function entryLine(e: MemoryEntry): string {
  const status = e.status === "quarantined" ? `quarantined (${e.rule})` : "active";
  const text = e.content.replace(/\s+/g, " ");
  return `${e.memoryId}\t${status}\tv${e.version}\t${e.storedAt}\t${text}`;
}

async function runList(opts: ListOpts): Promise<void> {
  if (!["active", "quarantined", "all"].includes(opts.status)) {
    throw new InvalidInputError("--status must be active, quarantined or all", "--status");
  }
  const limit = numberFlag(opts.limit, "--limit", 1, 1000, true);
  const kinds = listFlag(opts.kinds);
  const categories = listFlag(opts.categories);
  const store = await openExisting(opts);
  let page: EntryPage;
  try {
    page = await store.listEntries({
      userScope: opts.user,
      status: opts.status as "active" | "quarantined" | "all",
      limit,
      ...(opts.after === undefined ? {} : { after: opts.after }),
      ...(kinds === undefined ? {} : { kinds }),
      ...(categories === undefined ? {} : { categories }),
    });
  } finally {
    await store.close();
  }
  if (opts.json) {
    process.stdout.write(`${JSON.stringify({ userScope: opts.user, ...page })}\n`);
    return;
  }
  for (const e of page.entries) process.stdout.write(`${entryLine(e)}\n`);
  if (page.entries.length === 0)
    process.stderr.write(`no memories in scope ${JSON.stringify(opts.user)}\n`);
  if (page.next !== null) process.stderr.write(`more: --after ${JSON.stringify(page.next)}\n`);
}

interface IdOpts extends ScopeOpts {
  id: string;
}

async function runShow(opts: IdOpts): Promise<void> {
  const store = await openExisting(opts);
  let entry: MemoryEntry | null;
  try {
    entry = await store.getEntry(opts.id, { userScope: opts.user });
  } finally {
    await store.close();
  }
  if (entry === null) throw new MemoryNotFoundError(opts.id, opts.user);
  if (opts.json) process.stdout.write(`${JSON.stringify(entry)}\n`);
  else process.stdout.write(`${entryLine(entry)}\n`);
}

async function runHistory(opts: IdOpts): Promise<void> {
  const store = await openExisting(opts);
  let versions: MemoryVersion[];
  try {
    versions = await store.history(opts.id, { userScope: opts.user });
  } finally {
    await store.close();
  }
  if (versions.length === 0) throw new MemoryNotFoundError(opts.id, opts.user);
  if (opts.json) {
    process.stdout.write(
      `${JSON.stringify({ memoryId: opts.id, userScope: opts.user, versions })}\n`,
    );
    return;
  }
  for (const v of versions) {
    const status = v.status === "quarantined" ? `quarantined (${v.rule})` : v.status;
    const mark = v.current ? " (current)" : "";
    process.stdout.write(
      `v${v.version}\t${v.storedAt}\t${status}${mark}\t${v.record.content.replace(/\s+/g, " ")}\n`,
    );
  }
}

interface ForgetOpts extends ScopeOpts {
  id?: string;
  all?: boolean;
  kinds?: string;
  categories?: string;
}

async function runForget(opts: ForgetOpts): Promise<void> {
  if ((opts.id === undefined) === (opts.all !== true)) {
    throw new InvalidInputError(
      "give --id ID or --all (not both)",
      opts.id === undefined ? "--id" : "--all",
    );
  }
  const kinds = listFlag(opts.kinds);
  const categories = listFlag(opts.categories);
  if (opts.id !== undefined && (kinds !== undefined || categories !== undefined)) {
    throw new InvalidInputError(
      "--kinds and --categories go with --all",
      kinds !== undefined ? "--kinds" : "--categories",
    );
  }
  const target: ForgetTarget =
    opts.id !== undefined
      ? { userScope: opts.user, memoryId: opts.id }
      : {
          userScope: opts.user,
          all: true,
          ...(kinds === undefined ? {} : { kinds }),
          ...(categories === undefined ? {} : { categories }),
        };
  const store = await openExisting(opts);
  let result: { memories: number; removed: number };
  try {
    result = await store.forget(target);
  } finally {
    await store.close();
  }
  if (opts.json) {
    process.stdout.write(`${JSON.stringify({ userScope: opts.user, ...result })}\n`);
    return;
  }
  process.stdout.write(
    `forgot ${result.memories} memor${result.memories === 1 ? "y" : "ies"} (${result.removed} record(s), versions included) in scope ${JSON.stringify(opts.user)}\n`,
  );
}

async function runApprove(opts: IdOpts): Promise<void> {
  const store = await openExisting(opts);
  let entry: MemoryEntry | null;
  try {
    entry = await store.approve(opts.id, { userScope: opts.user });
  } finally {
    await store.close();
  }
  if (entry === null) throw new MemoryNotFoundError(opts.id, opts.user);
  if (opts.json) process.stdout.write(`${JSON.stringify(entry)}\n`);
  else
    process.stdout.write(
      `approved ${opts.id} (scope ${JSON.stringify(opts.user)}): recalled from now on\n`,
    );
}

/** Runs `fn` and reports its error as `verb` does (exit 2 on bad input or an unknown id). */
function action<T>(verb: string, setExit: (code: number) => void, fn: (opts: T) => Promise<void>) {
  return async (opts: T) => {
    try {
      await fn(opts);
      setExit(EXIT.ok);
    } catch (err) {
      setExit(reportError(err, verb));
    }
  };
}

/** Adds `memory list|show|history|forget|approve` to the `memory` command. */
export function registerMemoryManageCommands(
  memory: Command,
  setExit: (code: number) => void,
): void {
  storeOptions(memory.command("list"))
    .description("list one scope's memories by id (paged), with status and version")
    .requiredOption("--user <scope>", "user scope (exact)")
    .option("--status <s>", "active | quarantined | all", "all")
    .option("--kinds <a,b>", "only these kinds")
    .option("--categories <a,b>", "only these categories")
    .option("--limit <n>", "memories per page (1..1000)", "100")
    .option("--after <memoryId>", "the page after this id (the previous page's `next`)")
    .option("--json", "print {userScope, entries, next}")
    .action(action("memory list", setExit, runList));

  storeOptions(memory.command("show"))
    .description("one memory of a scope, with status, rule and version")
    .requiredOption("--user <scope>", "user scope (exact)")
    .requiredOption("--id <memoryId>", "memory id")
    .option("--json", "print the entry as JSON")
    .action(action("memory show", setExit, runShow));

  storeOptions(memory.command("history"))
    .description("every version of a memory, oldest first, with the store's time of each write")
    .requiredOption("--user <scope>", "user scope (exact)")
    .requiredOption("--id <memoryId>", "memory id")
    .option("--json", "print {memoryId, userScope, versions}")
    .action(action("memory history", setExit, runHistory));

  storeOptions(memory.command("forget"))
    .description("erase a memory (every version), or all of a scope's memories")
    .requiredOption("--user <scope>", "user scope (exact)")
    .option("--id <memoryId>", "the memory to forget")
    .option("--all", "every memory of the scope (narrow with --kinds / --categories)")
    .option("--kinds <a,b>", "with --all: only these kinds")
    .option("--categories <a,b>", "with --all: only these categories")
    .option("--json", "print {userScope, memories, removed}")
    .addHelpText(
      "after",
      "\nForgetting erases: the text leaves recall (at any instant), list, history, export and the\nfull-text index; an SQLite store also zeroes it in its file and truncates its WAL.\nAn id the scope does not hold forgets nothing (0 removed, exit 0).",
    )
    .action(action("memory forget", setExit, runForget));

  storeOptions(memory.command("approve"))
    .description("release a quarantined memory (the takeover gate held it): recalled from now on")
    .requiredOption("--user <scope>", "user scope (exact)")
    .requiredOption("--id <memoryId>", "memory id")
    .option("--json", "print the entry as JSON")
    .action(action("memory approve", setExit, runApprove));
}
