/**
 * `--store FILE` on first use: every verb that takes `--store` creates an empty SQLite
 * store when FILE is absent and says so on stderr (one line), so `serve --store new.db`
 * starts instead of failing. A missing directory is an error: a typo never creates one.
 */
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { InvalidInputError } from "../errors/index.js";

/**
 * Creates an empty memory store at `target` when it is a file path that does not exist
 * (a `postgres://` URL is left to the store, which creates its tables itself); returns
 * whether it did.
 *
 * @example await createStoreIfAbsent("new.db", "serve"); // stderr: promptctx serve: created …
 */
export async function createStoreIfAbsent(target: string, verb: string): Promise<boolean> {
  if (target.includes("://")) return false;
  const path = resolve(target);
  if (existsSync(path)) return false;
  if (!existsSync(dirname(path))) {
    throw new InvalidInputError(
      `cannot create the memory store ${path}: its directory ${dirname(path)} does not exist`,
      "--store",
    );
  }
  const { openStore } = await import("../store/index.js");
  openStore(path).close();
  process.stderr.write(`promptctx ${verb}: created an empty memory store at ${path}\n`);
  return true;
}
