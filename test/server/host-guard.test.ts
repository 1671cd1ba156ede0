/**
 * Issue 25 item 3: `serve` and `inspect` answer only their own names. Real servers — the
 * built CLI's `serve` and `inspect`, on 127.0.0.1 — are sent what a web page could make a
 * browser send: a foreign Host (DNS rebinding), an allowed name with another port, no
 * Host, cross-origin POSTs (Origin, `Origin: null`, `Sec-Fetch-Site: cross-site`), and the
 * same-origin requests that must still work; then `--allow-host`. Refusals are typed JSON
 * errors and leak nothing of the recording.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildServer, parseAllowHosts } from "../../src/server/index.js";
import { BIN, runCli } from "../cli/run-cli.js";
import { ROOT, WORKSPACE } from "./helpers.js";

const FIXTURE = join(ROOT, "test/fixtures/recordings/example.jsonl");

interface Reply {
  status: number;
  body: string;
}

/** One request to 127.0.0.1:`port` with exactly the headers given (Host included). */
function send(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: "127.0.0.1", port, method, path, headers, setHost: false },
      (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (c: string) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** A raw request (for what `http.request` will not send: no Host at all). */
function raw(port: number, text: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let out = "";
    socket.setEncoding("utf8").on("data", (c: string) => (out += c));
    socket.on("error", reject);
    socket.on("close", () =>
      resolve({
        status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(out)?.[1] ?? 0),
        body: out.slice(out.indexOf("\r\n\r\n") + 4),
      }),
    );
    socket.end(text);
  });
}

const codeOf = (r: Reply): string | undefined => {
  try {
    return (JSON.parse(r.body) as { error?: { code?: string } }).error?.code;
  } catch {
    return undefined;
  }
};

/** The built CLI serving (`serve` or `inspect`), resolved with its port once listening. */
function start(args: string[]): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args, "--port", "0"], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { PATH: process.env.PATH ?? "" },
    });
    let out = "";
    let err = "";
    child.stderr?.setEncoding("utf8").on("data", (s: string) => (err += s));
    child.stdout?.setEncoding("utf8").on("data", (s: string) => {
      out += s;
      const m = /(?:listening|inspector) on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m?.[1] !== undefined) resolve({ child, port: Number(m[1]) });
    });
    child.on("exit", (code) => reject(new Error(`exited ${code}: ${err}${out}`)));
  });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.removeAllListeners("exit");
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

const PLAN_BODY = JSON.stringify({ segments: [], budgetChars: 100 });

const SURFACES = [
  { name: "serve", args: ["serve", "--workspace", WORKSPACE, "--no-log"], read: "/healthz" },
  { name: "inspect", args: ["inspect", FIXTURE], read: "/inspect/data" },
];

describe.each(SURFACES)("$name: Host and Origin checks on a real server", ({ args, read }) => {
  let server: { child: ChildProcess; port: number };
  let allowing: { child: ChildProcess; port: number };
  beforeAll(async () => {
    [server, allowing] = await Promise.all([
      start(args),
      start([...args, "--allow-host", "box.lan", "--allow-host", "Proxy.Example:8443"]),
    ]);
  });
  afterAll(async () => {
    await Promise.all([stop(server.child), stop(allowing.child)]);
  });

  it("answers its loopback names with the bound port", async () => {
    const p = server.port;
    for (const host of [`127.0.0.1:${p}`, `localhost:${p}`, `[::1]:${p}`, `LOCALHOST:${p}`]) {
      const r = await send(p, "GET", read, { host });
      expect([host, r.status]).toEqual([host, 200]);
    }
  });

  it("refuses a foreign Host (DNS rebinding) with 421 host_not_allowed, leaking nothing", async () => {
    const p = server.port;
    const secret = (await send(p, "GET", read, { host: `127.0.0.1:${p}` })).body;
    for (const host of [
      `evil.example:${p}`,
      "evil.example",
      `127.0.0.1.evil.example:${p}`,
      `10.0.0.1:${p}`,
    ]) {
      const r = await send(p, "GET", read, { host });
      expect([host, r.status, codeOf(r)]).toEqual([host, 421, "host_not_allowed"]);
      expect(r.body).not.toContain(secret.slice(0, 40));
      expect(JSON.parse(r.body).error.path).toBe("host");
    }
  });

  it("refuses an allowed name with another port, or none, and malformed Hosts", async () => {
    const p = server.port;
    for (const host of [
      `localhost:${p + 1}`,
      "localhost",
      `127.0.0.1:${p}0`,
      "a b",
      `localhost:${p}@evil`,
    ]) {
      const r = await send(p, "GET", read, { host });
      expect([host, r.status, codeOf(r)]).toEqual([host, 421, "host_not_allowed"]);
    }
  });

  it("refuses a request without Host", async () => {
    const r = await raw(server.port, `GET ${read} HTTP/1.0\r\n\r\n`);
    expect([r.status, codeOf(r)]).toEqual([421, "host_not_allowed"]);
    const r11 = await raw(server.port, `GET ${read} HTTP/1.1\r\nConnection: close\r\n\r\n`);
    expect(r11.status).toBeGreaterThanOrEqual(400); // Node refuses it before routing
    expect(r11.status).toBeLessThan(500);
  });

  it("refuses cross-origin POSTs with 403 origin_not_allowed, before reading the body", async () => {
    const host = `127.0.0.1:${server.port}`;
    const json = { "content-type": "application/json", host };
    const cases: Array<Record<string, string>> = [
      { origin: "http://evil.example" },
      { origin: `http://evil.example:${server.port}` },
      { origin: `http://localhost:${server.port + 1}` },
      { origin: "null" },
      { origin: "file://" },
      { "sec-fetch-site": "cross-site" },
      { origin: `http://127.0.0.1:${server.port}`, "sec-fetch-site": "cross-site" },
    ];
    for (const extra of cases) {
      const r = await send(
        server.port,
        "POST",
        "/v1/plan-prompt",
        { ...json, ...extra },
        PLAN_BODY,
      );
      expect([extra, r.status, codeOf(r)]).toEqual([extra, 403, "origin_not_allowed"]);
    }
  });

  it("answers same-origin POSTs and those sent without a browser", async () => {
    const p = server.port;
    const cases: Array<Record<string, string>> = [
      {},
      { origin: `http://127.0.0.1:${p}` },
      { origin: `http://localhost:${p}`, "sec-fetch-site": "same-origin" },
      { "sec-fetch-site": "same-origin" },
      { "sec-fetch-site": "none" },
    ];
    for (const extra of cases) {
      const headers = { "content-type": "application/json", host: `localhost:${p}`, ...extra };
      const r = await send(p, "POST", "/v1/plan-prompt", headers, PLAN_BODY);
      expect([extra, r.status]).toEqual([extra, 200]);
    }
  });

  it("--allow-host NAME adds names (any port or its own), NAME:PORT exactly that", async () => {
    const p = allowing.port;
    const ok = ["box.lan", `box.lan:${p}`, "BOX.LAN", "proxy.example:8443", `127.0.0.1:${p}`];
    for (const host of ok) {
      expect([host, (await send(p, "GET", read, { host })).status]).toEqual([host, 200]);
    }
    for (const host of [`box.lan:${p + 1}`, "proxy.example", `proxy.example:${p}`, "other.lan"]) {
      const r = await send(p, "GET", read, { host });
      expect([host, r.status, codeOf(r)]).toEqual([host, 421, "host_not_allowed"]);
    }
    const post = (origin: string) =>
      send(
        p,
        "POST",
        "/v1/plan-prompt",
        { "content-type": "application/json", host: "box.lan", origin },
        PLAN_BODY,
      );
    expect((await post("http://box.lan")).status).toBe(200);
    expect((await post("https://proxy.example:8443")).status).toBe(200);
    expect(codeOf(await post("http://other.lan"))).toBe("origin_not_allowed");
  });
});

describe("binding and options", () => {
  it.each([
    ["serve", ["serve", "--workspace", WORKSPACE]],
    ["inspect", ["inspect", FIXTURE]],
  ])("%s refuses to bind beyond loopback without --allow-host (exit 2)", (_name, args) => {
    const r = runCli([...args, "--host", "0.0.0.0", "--port", "0"]);
    expect(r.code).toBe(2);
    const err = JSON.parse(r.stdout).error;
    expect([err.code, err.path]).toEqual(["invalid_input", "allowHosts"]);
    expect(err.message).toMatch(/--allow-host/);
  });

  it("an invalid --allow-host is invalid_input naming it", () => {
    const r = runCli([
      "serve",
      "--workspace",
      WORKSPACE,
      "--port",
      "0",
      "--allow-host",
      "bad host!",
    ]);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.path).toBe("allowHosts[0]");
  });

  it("the library option validates its names", () => {
    expect(parseAllowHosts(["Box.lan", "10.0.0.5:8787", "[fd00::1]"])).toEqual([
      { name: "box.lan", port: null },
      { name: "10.0.0.5", port: 8787 },
      { name: "[fd00::1]", port: null },
    ]);
    for (const bad of ["", "a b", "http://x", "x:99999", "-x", "x/"]) {
      expect(() => parseAllowHosts([bad])).toThrow(/allowHosts|host name/);
    }
  });

  it("the Host check runs before the token check (a foreign Host never reaches auth)", async () => {
    const app = await buildServer({
      workspace: WORKSPACE,
      store: null,
      auth: { tokens: [{ token: "0123456789abcdef0123", scope: null }] },
      allowHosts: ["svc.internal"],
    });
    try {
      const foreign = await app.inject({ url: "/healthz", headers: { host: "evil.example" } });
      expect([foreign.statusCode, foreign.json().error.code]).toEqual([421, "host_not_allowed"]);
      const own = await app.inject({ url: "/healthz", headers: { host: "svc.internal" } });
      expect([own.statusCode, own.json().error.code]).toEqual([401, "unauthorized"]);
    } finally {
      await app.close();
    }
  });
});
