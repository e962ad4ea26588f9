import type { IncomingHttpHeaders } from "node:http";

export interface CacheBounds {
  /** A positive lifetime shorter than this is raised to it (bounds how often a client can make us refetch). */
  minMs: number;
  /** Used when the response says nothing about freshness. */
  defaultMs: number;
  /** A longer lifetime is cut to this (bounds how long a changed document, e.g. a removed redirect URI, stays in force). */
  maxMs: number;
}

/**
 * How long a valid document may be served from cache, from its response headers (RFC 9111), or
 * 0 when it must not be cached. We are a shared cache (one document serves every user), so
 * `s-maxage` wins over `max-age`, and `private` forbids storing. We never revalidate, so
 * `no-cache` means "do not cache" too. `Age` is subtracted; `Expires` counts from the response's
 * `Date` (the origin's clock, so skew between the clocks does not matter).
 */
export function cacheLifetimeMs(headers: IncomingHttpHeaders, bounds: CacheBounds): number {
  const directives = parseCacheControl(headers["cache-control"]);
  if (directives.has("no-store") || directives.has("no-cache") || directives.has("private")) return 0;
  if (headers.vary?.split(",").some((v) => v.trim() === "*")) return 0;

  let lifetimeSeconds: number | undefined;
  const maxAge = directives.get("s-maxage") ?? directives.get("max-age");
  if (maxAge !== undefined) {
    // A malformed value makes the response stale (RFC 9111 §4.2.1).
    lifetimeSeconds = secondsOf(maxAge) ?? 0;
  } else if (headers.expires !== undefined) {
    const expires = Date.parse(headers.expires);
    const date = headers.date === undefined ? Number.NaN : Date.parse(headers.date);
    // An unparseable Expires means "already expired" (RFC 9111 §5.3).
    lifetimeSeconds = Number.isNaN(expires) || Number.isNaN(date) ? 0 : Math.max(0, Math.floor((expires - date) / 1000));
  }
  if (lifetimeSeconds === undefined) return bounds.defaultMs;

  const remainingMs = (lifetimeSeconds - (secondsOf(headerValue(headers.age)) ?? 0)) * 1000;
  if (remainingMs <= 0) return 0;
  return Math.min(bounds.maxMs, Math.max(bounds.minMs, remainingMs));
}

/** Directive names (lower-cased) to their values ("" when a directive has none). */
function parseCacheControl(header: string | undefined): Map<string, string> {
  const directives = new Map<string, string>();
  if (header === undefined) return directives;
  for (const part of header.split(",")) {
    const [rawName, ...rest] = part.split("=");
    const name = rawName?.trim().toLowerCase();
    if (!name) continue;
    const value = rest
      .join("=")
      .trim()
      .replace(/^"(.*)"$/, "$1");
    // Conflicting duplicates: keep the first, as most caches do.
    if (!directives.has(name)) directives.set(name, value);
  }
  return directives;
}

/** A delta-seconds value (non-negative integer), or undefined when absent or malformed. */
function secondsOf(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{1,10}$/.test(value)) return undefined;
  return Number(value);
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
