import { rootCertificates } from "node:tls";
import { isAppError } from "@3ngram/errors";
import type { Logger } from "@3ngram/runtime";
import { MAX_CLIENT_METADATA_DOCUMENT_BYTES, type ClientMetadataDocument } from "@3ngram/schema";
import { LRUCache } from "lru-cache";
import { isPublicAddress } from "./address-policy.js";
import { cacheLifetimeMs, type CacheBounds } from "./cache-lifetime.js";
import { parseClientIdUrl, parseHopUrl, type UrlPolicy } from "./client-id-url.js";
import { parseClientMetadataDocument } from "./document.js";
import { refused, unreachable } from "./errors.js";
import type { ClientMetadataFetcher } from "./fetcher.js";
import { httpsGetOnce } from "./https-get.js";
import { resolveAllowedAddresses, systemResolve, type ResolveHost } from "./resolve-host.js";

/** The production limits; docs/oauth-cimd.md explains each one. */
export const CIMD_DEFAULTS = {
  timeoutMs: 5_000,
  maxRedirects: 0,
  maxInFlight: 64,
  cacheEntries: 512,
  cacheMinTtlMs: 60_000,
  cacheDefaultTtlMs: 5 * 60_000,
  cacheMaxTtlMs: 60 * 60_000,
} as const;
/** Redirects are off by default (draft §5); even when enabled, never more than this. */
export const MAX_CIMD_REDIRECTS = 3;

/**
 * Options of createClientMetadataFetcher. Every default is the strict production behaviour; the
 * options marked "tests" widen it and must not be set in a deployment.
 */
export interface ClientMetadataFetcherOptions {
  /** Deadline for one fetch, every hop, DNS and body included (default 5 s). */
  timeoutMs?: number;
  /**
   * Redirects followed (default 0: the draft says not to follow them, and a redirect then fails
   * the fetch). At most 3; each hop is validated and resolved like the first URL.
   */
  maxRedirects?: number;
  /** Distinct fetches running at once across the process (default 64); past it, `unavailable`. */
  maxInFlight?: number;
  /** Documents kept (least recently used evicted first; default 512). */
  cacheEntries?: number;
  /** Bounds on how long a document is cached (defaults: at least 60 s, 5 min when the response says nothing, at most 1 h). */
  cacheTtl?: Partial<CacheBounds>;
  /** Ports other than 443 that URLs may name (default none). */
  allowedPorts?: readonly number[];
  /** Hostname → addresses (default: the system resolver, all A and AAAA answers). Tests map names to local servers. */
  resolve?: ResolveHost;
  /** Extra trusted CA certificates (PEM), added to Node's bundled roots. Tests: a self-signed certificate. */
  ca?: string | Buffer | readonly (string | Buffer)[];
  /** Tests only: addresses accepted although not public (e.g. 127.0.0.1 where the test server listens). */
  allowAddress?: (address: string) => boolean;
  /** Clock for cache freshness, in ms (default Date.now). */
  now?: () => number;
  /** Refusals are logged at warn with the host and the reason, never the document. */
  logger?: Logger;
}

interface CachedDocument {
  document: ClientMetadataDocument;
  expiresAt: number;
}

/**
 * The SSRF-safe Client ID Metadata Document fetcher: validates the client_id URL, resolves its
 * host and refuses any non-public answer, connects to the validated address with TLS verified for
 * the URL's host, optionally follows a bounded number of validated redirects, bounds time, bytes,
 * concurrency and cache size, and caches only valid documents as their headers allow. Concurrent
 * fetches of one URL share one request; failures are never cached (draft §5.2).
 */
export function createClientMetadataFetcher(options: ClientMetadataFetcherOptions = {}): ClientMetadataFetcher {
  const timeoutMs = options.timeoutMs ?? CIMD_DEFAULTS.timeoutMs;
  const maxRedirects = options.maxRedirects ?? CIMD_DEFAULTS.maxRedirects;
  const maxInFlight = options.maxInFlight ?? CIMD_DEFAULTS.maxInFlight;
  const cacheEntries = options.cacheEntries ?? CIMD_DEFAULTS.cacheEntries;
  if (!Number.isInteger(maxRedirects) || maxRedirects < 0 || maxRedirects > MAX_CIMD_REDIRECTS) {
    throw new RangeError(`maxRedirects must be an integer from 0 to ${MAX_CIMD_REDIRECTS}`);
  }
  for (const [name, value] of Object.entries({ timeoutMs, maxInFlight, cacheEntries })) {
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  }
  const bounds: CacheBounds = {
    minMs: options.cacheTtl?.minMs ?? CIMD_DEFAULTS.cacheMinTtlMs,
    defaultMs: options.cacheTtl?.defaultMs ?? CIMD_DEFAULTS.cacheDefaultTtlMs,
    maxMs: options.cacheTtl?.maxMs ?? CIMD_DEFAULTS.cacheMaxTtlMs,
  };
  if (!(bounds.minMs >= 0 && bounds.minMs <= bounds.defaultMs && bounds.defaultMs <= bounds.maxMs)) {
    throw new RangeError("cacheTtl must satisfy 0 <= minMs <= defaultMs <= maxMs");
  }
  const widen = options.allowAddress;
  const policy: UrlPolicy = {
    allowedPorts: new Set(options.allowedPorts ?? []),
    allowAddress: widen === undefined ? isPublicAddress : (address) => isPublicAddress(address) || widen(address),
  };
  const resolve = options.resolve ?? systemResolve;
  const ca = options.ca === undefined ? undefined : [...rootCertificates, ...(Array.isArray(options.ca) ? options.ca : [options.ca])];
  const now = options.now ?? Date.now;
  const log = options.logger;

  const cache = new LRUCache<string, CachedDocument>({ max: cacheEntries });
  const inFlight = new Map<string, Promise<ClientMetadataDocument>>();

  async function fetchUncached(clientId: string, first: URL): Promise<ClientMetadataDocument> {
    const signal = AbortSignal.timeout(timeoutMs);
    let url = first;
    try {
      for (let hop = 0; ; hop += 1) {
        const addresses = await resolveAllowedAddresses(url, resolve, policy.allowAddress, signal);
        const result = await httpsGetOnce(url, { addresses, maxBytes: MAX_CLIENT_METADATA_DOCUMENT_BYTES, ca, signal });
        if (result.kind === "redirect") {
          if (maxRedirects === 0) throw refused("metadata document request was redirected (redirects are not followed)");
          if (hop >= maxRedirects) throw refused(`metadata document request was redirected more than ${maxRedirects} times`);
          url = parseHopUrl(result.location, url, policy);
          continue;
        }
        const document = parseClientMetadataDocument(result.body, clientId);
        const lifetimeMs = cacheLifetimeMs(result.headers, bounds);
        if (lifetimeMs > 0) cache.set(clientId, { document, expiresAt: now() + lifetimeMs });
        return document;
      }
    } catch (err) {
      if (isAppError(err)) throw err;
      if (signal.aborted) throw unreachable(`metadata document was not fetched within ${timeoutMs} ms`, true);
      throw unreachable("metadata document could not be fetched", true);
    }
  }

  return {
    async fetch(clientId: string): Promise<ClientMetadataDocument> {
      const cached = cache.get(clientId);
      if (cached !== undefined) {
        if (now() < cached.expiresAt) return cached.document;
        cache.delete(clientId);
      }
      const pending = inFlight.get(clientId);
      if (pending !== undefined) return pending;

      let url: URL;
      try {
        url = parseClientIdUrl(clientId, policy);
      } catch (err) {
        logRefusal(log, undefined, err);
        throw err;
      }
      if (inFlight.size >= maxInFlight) {
        throw unreachable("too many client metadata documents are being fetched; retry shortly", true);
      }
      const fetching = fetchUncached(clientId, url).finally(() => inFlight.delete(clientId));
      inFlight.set(clientId, fetching);
      fetching.catch((err: unknown) => logRefusal(log, url.hostname, err));
      return fetching;
    },
  };
}

function logRefusal(log: Logger | undefined, host: string | undefined, err: unknown): void {
  if (log === undefined || !isAppError(err)) return;
  log.warn({ host, reason: err.reason, detail: err.message }, "client metadata document refused");
}
