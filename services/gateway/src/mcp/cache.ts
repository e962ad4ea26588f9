/**
 * Cache hints (2026-07-28 `ttlMs` / `cacheScope`) for every cacheable result, listed explicitly:
 * a method left out does not go without a hint, it gets the SDK's default (ttl 0, private), which
 * clients read as "always stale". The SDK omits the fields from 2025-era responses.
 *
 * The catalog (discover, tools, prompts, resource templates, and the always-empty resource list)
 * is the same for every caller and changes only on a deploy, so all of it shares one TTL and is
 * public. Being cached never skips authentication: tools/call, prompts/get, resources/read and
 * completion/complete are never served from a cache and each request is authenticated.
 *
 * A memory resource body is tenant data, so it is private; it is an immutable projection (a
 * correction mints a new id), so a long TTL cannot serve a stale body.
 */
import type { McpServerOptions } from "@modelcontextprotocol/server";

export const CATALOG_CACHE_TTL_MS = 60 * 60 * 1000;
export const MEMORY_RESOURCE_CACHE_TTL_MS = 24 * 60 * 60 * 1000;

type CacheHints = Required<NonNullable<McpServerOptions["cacheHints"]>>;

const CATALOG = { ttlMs: CATALOG_CACHE_TTL_MS, cacheScope: "public" } as const;

export const CACHE_HINTS: CacheHints = {
  "server/discover": CATALOG,
  "tools/list": CATALOG,
  "prompts/list": CATALOG,
  "resources/templates/list": CATALOG,
  // Always empty: the memory corpus is never enumerable.
  "resources/list": CATALOG,
  "resources/read": { ttlMs: MEMORY_RESOURCE_CACHE_TTL_MS, cacheScope: "private" },
};
