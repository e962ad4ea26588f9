/**
 * Origin validation for /mcp (DNS-rebinding and cross-site protection). Browsers always send
 * Origin on cross-origin POSTs; native MCP clients send none, so an absent Origin is allowed and a
 * present one must be on the allowlist: the configured origins plus the server's own (see
 * selfOrigins). Host is deliberately not checked: the gateway runs behind proxies and in pods
 * under many names.
 */
import type { RequestHandler } from "express";

/** Canonical "scheme://host[:port]" form (default ports dropped, lower case), or undefined. */
export function normalizeOrigin(value: string): string | undefined {
  try {
    const url = new URL(value);
    if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}

const LOOPBACK_HOSTS = ["localhost", "127.0.0.1", "[::1]"];

/**
 * The origins a server reached at these URLs is itself: each URL's origin and, when its host is a
 * loopback name, the same scheme and port under every loopback name (a browser on the machine
 * may call it localhost or 127.0.0.1). A page served from the server's own origin is not a
 * cross-site caller; a rebinding attacker's page always carries the attacker's origin.
 */
export function selfOrigins(urls: readonly (string | undefined)[]): string[] {
  const origins = new Set<string>();
  for (const raw of urls) {
    const origin = raw === undefined ? undefined : normalizeOrigin(raw);
    if (origin === undefined) continue;
    origins.add(origin);
    const url = new URL(origin);
    if (!LOOPBACK_HOSTS.includes(url.hostname)) continue;
    for (const host of LOOPBACK_HOSTS) {
      const alias = new URL(origin);
      alias.hostname = host;
      origins.add(alias.origin);
    }
  }
  return [...origins];
}

export function isOriginAllowed(origin: string | undefined, allowed: readonly string[]): boolean {
  if (origin === undefined) return true;
  const normalized = normalizeOrigin(origin);
  return normalized !== undefined && allowed.includes(normalized);
}

/**
 * Express guard for /mcp, run before authentication: a disallowed Origin gets 403 with a
 * JSON-RPC error body (the endpoint speaks JSON-RPC, so clients can parse it).
 */
export function requireAllowedOrigin(allowed: () => readonly string[]): RequestHandler {
  return (req, res, next) => {
    if (isOriginAllowed(req.headers.origin, allowed())) {
      next();
      return;
    }
    res.status(403).json({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "Origin not allowed" } });
  };
}
