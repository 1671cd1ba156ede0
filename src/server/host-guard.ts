/**
 * Host and Origin checks of `serve` and `inspect` (docs/security.md): a web page can make
 * a browser send requests to a loopback service, and, by DNS rebinding, read the answers
 * under its own name. So the service answers only requests whose `Host` is one of its own
 * names — the loopback names `127.0.0.1`, `localhost` and `[::1]` with the bound port, and
 * the names the user allows (`allowHosts`, `--allow-host NAME`) — and refuses a request
 * with a body that a browser marks as cross-origin (`Origin` not one of those names,
 * `Origin: null`, or `Sec-Fetch-Site: cross-site`). Both checks run first, before the
 * token check and before the body is read; they fail closed (a missing or malformed
 * `Host` is refused).
 */
import type { AddressInfo } from "node:net";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { InvalidInputError, PromptctxError } from "../errors/index.js";

/** The names a loopback service always answers to (with its bound port). */
export const LOOPBACK_NAMES: readonly string[] = ["127.0.0.1", "localhost", "[::1]"];

/** A request whose `Host` is not one of the service's names (HTTP 421). */
export class HostNotAllowedError extends PromptctxError {
  constructor(message: string) {
    super("host_not_allowed", message, "host");
    this.name = "HostNotAllowedError";
  }
}

/** A cross-origin request with a body (HTTP 403). */
export class OriginNotAllowedError extends PromptctxError {
  constructor(message: string) {
    super("origin_not_allowed", message, "origin");
    this.name = "OriginNotAllowedError";
  }
}

/** A host name and, when stated, a port. */
interface HostPort {
  name: string;
  port: number | null;
}

const HOST_PORT = /^(\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)(?::(\d{1,5}))?$/;

function parseHostPort(value: string): HostPort | null {
  const m = HOST_PORT.exec(value.toLowerCase());
  if (m === null) return null;
  const port = m[2] === undefined ? null : Number(m[2]);
  if (port !== null && port > 65535) return null;
  return { name: m[1] as string, port };
}

/**
 * True when `host` names an interface that only this machine reaches (`127.x.x.x`,
 * `::1`, `localhost`): binding anything else needs allowed hosts.
 *
 * @example isLoopbackHost("127.0.0.1") // true
 * isLoopbackHost("0.0.0.0") // false
 */
export function isLoopbackHost(host: string): boolean {
  return /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|\[::1\]|localhost)$/i.test(host);
}

/**
 * Validates allowed host names (`NAME` or `NAME:PORT`; a DNS name, an IPv4 address or a
 * bracketed IPv6 address), lowercased. Throws `invalid_input` at `allowHosts[i]`.
 *
 * @example parseAllowHosts(["Box.lan", "10.0.0.5:8787"]) // [{ name: "box.lan", port: null }, …]
 */
export function parseAllowHosts(list: readonly string[]): HostPort[] {
  return list.map((entry, i) => {
    const h = typeof entry === "string" ? parseHostPort(entry) : null;
    if (h === null) {
      throw new InvalidInputError(
        `must be a host name, an IPv4 address or a bracketed IPv6 address, with an optional :PORT, got ${JSON.stringify(entry)}`,
        `allowHosts[${i}]`,
      );
    }
    return h;
  });
}

/**
 * Does `h` name this service? A loopback name needs the bound port (no port stated means
 * 80); an allowed name without a port accepts no port or the bound port; `NAME:PORT` must
 * match exactly. Before the app listens (in-process `inject`) any port is the bound one.
 */
function isOwnName(h: HostPort, allowed: readonly HostPort[], bound: number | null): boolean {
  const portOk = (p: number | null) => bound === null || p === bound;
  if (LOOPBACK_NAMES.includes(h.name) && portOk(h.port ?? 80)) return true;
  return allowed.some((a) =>
    a.name !== h.name
      ? false
      : a.port !== null
        ? h.port === a.port
        : h.port === null || portOk(h.port),
  );
}

/** The port the app listens on, or null before it listens. */
function boundPort(app: FastifyInstance): number | null {
  const address = app.server.address() as AddressInfo | string | null;
  return address !== null && typeof address === "object" ? address.port : null;
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** Refuses a cross-origin request with a body (see the module comment). */
function checkOrigin(request: FastifyRequest, own: (h: HostPort) => boolean): void {
  if (SAFE_METHODS.has(request.method)) return;
  if (request.headers["sec-fetch-site"] === "cross-site") {
    throw new OriginNotAllowedError("cross-site request refused (Sec-Fetch-Site: cross-site)");
  }
  const origin = request.headers.origin;
  if (origin === undefined) return; // not sent by a browser page (curl, SDKs)
  let h: HostPort | null = null;
  try {
    const url = new URL(origin);
    if (url.protocol === "http:" || url.protocol === "https:") h = parseHostPort(url.host);
  } catch {
    h = null; // `null` and other opaque origins
  }
  if (h === null || !own(h)) {
    throw new OriginNotAllowedError(
      `cross-origin request refused: Origin ${JSON.stringify(origin.slice(0, 200))} is not allowed`,
    );
  }
}

/**
 * Installs the Host and Origin checks as the first request hook.
 *
 * @example registerHostGuard(app, ["promptctx.internal"]);
 */
export function registerHostGuard(app: FastifyInstance, allowHosts: readonly string[] = []): void {
  const allowed = parseAllowHosts(allowHosts);
  // A callback hook: an async one costs every request a promise.
  app.addHook("onRequest", (request, _reply, done) => {
    const own = (h: HostPort) => isOwnName(h, allowed, boundPort(app));
    const value = request.headers.host;
    const h = value === undefined ? null : parseHostPort(value);
    if (h === null || !own(h)) {
      const shown = value === undefined ? "missing" : JSON.stringify(value.slice(0, 200));
      done(
        new HostNotAllowedError(
          `Host ${shown} is not a name of this service (allow it with --allow-host)`,
        ),
      );
      return;
    }
    try {
      checkOrigin(request, own);
    } catch (err) {
      done(err as Error);
      return;
    }
    done();
  });
}
