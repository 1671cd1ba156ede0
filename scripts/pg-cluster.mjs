/**
 * A throwaway PostgreSQL cluster for tests and benchmarks: `initdb` + `pg_ctl` in a fresh
 * temp directory (data, log and unix socket all inside it), on a free port of 127.0.0.1,
 * trust authentication, with an ordinary login role `promptctx` (not a superuser, no
 * BYPASSRLS: row-level security applies to it) owning a database `promptctx`.
 *
 * When the process runs as root, the server runs as the `postgres` user (`runuser -u
 * postgres --`; PostgreSQL refuses to run as root) and the directory is chowned to it.
 * `stop()` stops the server (fast shutdown) and removes the directory; an exit hook does
 * the same if the process ends first.
 *
 *   node scripts/pg-cluster.mjs     # start one, print its URL, stop on Ctrl-C
 *
 * Binaries: `$PG_BIN`, else the newest /usr/lib/postgresql/N/bin (Debian's layout), else
 * `initdb` on the PATH.
 */
import { execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";

/** The directory of `initdb`, `pg_ctl` and `postgres`, or null when none is installed. */
export function findPgBin() {
  const candidates = [];
  if (process.env.PG_BIN) candidates.push(process.env.PG_BIN);
  const debian = "/usr/lib/postgresql";
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) candidates.push(join(debian, v, "bin"));
  }
  for (const dir of (process.env.PATH ?? "").split(":")) if (dir) candidates.push(dir);
  for (const dir of candidates) {
    if (["initdb", "pg_ctl", "postgres"].every((b) => existsSync(join(dir, b)))) return dir;
  }
  return null;
}

/**
 * Whether the `pgvector` extension is installed for the PostgreSQL of `findPgBin()`
 * (its `vector.control` in the server's share directory; .ci/pgvector.sh installs it).
 */
export function hasPgvector() {
  const bin = findPgBin();
  if (bin === null) return false;
  const shares = [];
  try {
    const out = execFileSync(join(bin, "pg_config"), ["--sharedir"], { encoding: "utf8" });
    shares.push(out.trim());
  } catch {
    // no pg_config next to the server: Debian's layout below
  }
  const major = /\/postgresql\/(\d+)\/bin$/.exec(bin)?.[1];
  if (major !== undefined) shares.push(`/usr/share/postgresql/${major}`);
  return shares.some((d) => existsSync(join(d, "extension", "vector.control")));
}

/** A free TCP port on 127.0.0.1 (the OS picks it). */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function isRoot() {
  return typeof process.getuid === "function" && process.getuid() === 0;
}

/** Runs a PostgreSQL binary, as `postgres` when we are root. */
function runPg(bin, args) {
  const [cmd, argv] = isRoot() ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
  return execFileSync(cmd, argv, { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });
}

function postgresIds() {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((l) => l.startsWith("postgres:"));
  if (!line) throw new Error("running as root, but there is no `postgres` user to run the server");
  const [, , uid, gid] = line.split(":");
  return { uid: Number(uid), gid: Number(gid) };
}

async function createAppRole(adminUrl) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query("CREATE ROLE promptctx LOGIN NOSUPERUSER NOBYPASSRLS");
    await client.query("CREATE DATABASE promptctx OWNER promptctx");
  } finally {
    await client.end();
  }
}

/**
 * Starts a cluster. `settings` are extra server settings (`-c name=value`); tests pass
 * `{ fsync: "off" }`.
 *
 * @returns {Promise<{url: string, adminUrl: string, port: number, dir: string, stop: () => void}>}
 */
export async function startCluster(options = {}) {
  const bin = options.binDir ?? findPgBin();
  if (bin === null) {
    throw new Error(
      "PostgreSQL binaries not found (initdb, pg_ctl, postgres): install Debian's `postgresql` package or set PG_BIN",
    );
  }
  const dir = mkdtempSync(join(tmpdir(), "promptctx-pg-"));
  if (isRoot()) {
    const { uid, gid } = postgresIds();
    chownSync(dir, uid, gid);
  }
  const data = join(dir, "data");
  let started = false;
  const stop = () => {
    if (started) {
      started = false;
      try {
        runPg(join(bin, "pg_ctl"), ["stop", "-D", data, "-m", "fast", "-w"]);
      } catch {
        // Already gone: nothing to stop.
      }
    }
    rmSync(dir, { recursive: true, force: true });
    process.off("exit", stop);
  };
  process.on("exit", stop);
  try {
    const initdb = ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C"];
    runPg(join(bin, "initdb"), [...initdb, "-N"]);
    const port = await freePort();
    const settings = { listen_addresses: "127.0.0.1", max_connections: "200", ...options.settings };
    const opts = [`-p ${port}`, `-k ${dir}`]
      .concat(Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`))
      .join(" ");
    runPg(join(bin, "pg_ctl"), ["start", "-D", data, "-l", join(dir, "log"), "-w", "-o", opts]);
    started = true;
    const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
    await createAppRole(adminUrl);
    return { url: `postgres://promptctx@127.0.0.1:${port}/promptctx`, adminUrl, port, dir, stop };
  } catch (err) {
    const log = join(dir, "log");
    const tail = existsSync(log) ? readFileSync(log, "utf8").slice(-2000) : "";
    stop();
    const why = err instanceof Error ? `${err.message}${err.stderr ? `\n${err.stderr}` : ""}` : err;
    throw new Error(`cannot start a PostgreSQL cluster: ${why}${tail ? `\n${tail}` : ""}`);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const c = await startCluster();
  console.log(`app url:   ${c.url}\nadmin url: ${c.adminUrl}\n(Ctrl-C stops and removes it)`);
  const end = () => {
    c.stop();
    process.exit(0);
  };
  process.on("SIGINT", end);
  process.on("SIGTERM", end);
  setInterval(() => {}, 1 << 30);
}
