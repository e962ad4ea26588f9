import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { CredentialSigner } from "@3ngram/rpc";
import { composeService, createLogger, type Defer, type Logger } from "@3ngram/runtime";
import { createGatewayApp } from "./app.js";
import type { ApiKeyResolver } from "./auth/api-key.js";
import { connectMemory, type MemoryPeer } from "./clients/memory.js";
import { connectSearch, type SearchPeer } from "./clients/search.js";
import type { GatewayConfig } from "./config.js";
import type { PeerChecks } from "./http/health.js";
import { createGatewayMetrics, type GatewayMetrics } from "./http/metrics.js";
import { selfOrigins } from "./http/origin.js";
import { createMcpEndpoint } from "./mcp/server.js";
import { createClientMetadataFetcher } from "./oauth/cimd/create-fetcher.js";
import type { ClientMetadataFetcher } from "./oauth/cimd/fetcher.js";
import { oauthLocation } from "./oauth/issuer.js";
import { createRateLimits } from "./ratelimit/limits.js";
import { generateSessionSecret } from "./ui/session.js";

export interface GatewayDeps {
  /** Injected peers are used as they are and left open by close(): their owner closes them. */
  memory?: MemoryPeer;
  search?: SearchPeer;
  log?: Logger;
  metrics?: GatewayMetrics;
  peers?: PeerChecks;
  resolveApiKey?: ApiKeyResolver;
  /** Resolves https OAuth client_ids (Client ID Metadata Documents); defaults to the SSRF-safe fetcher built from config.cimd. */
  clientMetadataFetcher?: ClientMetadataFetcher;
}

export interface RunningGateway {
  port: number;
  /** Base URL on the bound address, e.g. http://127.0.0.1:8080 (MCP lives at `${url}/mcp`). */
  url: string;
  close(): Promise<void>;
}

/** How long close() lets in-flight requests finish before cutting connections. */
const CLOSE_GRACE_MS = 5_000;

/**
 * Connects to the peers (unless injected), then listens on config.host:config.port (0 = any free
 * port). close() undoes it in reverse: the HTTP server drains (it stops accepting, MCP sessions
 * close, in-flight requests finish), then the rate limits go, then the peers this call connected.
 */
export async function startGateway(config: GatewayConfig, deps: GatewayDeps = {}): Promise<RunningGateway> {
  const log = deps.log ?? createLogger({ service: "gateway", level: config.logLevel });
  return composeService(async (defer) => {
    defer(() => log.info("gateway stopped"));
    const signer = deps.memory && deps.search ? undefined : await CredentialSigner.fromJwk("gateway", config.serviceSigningJwk);
    const memory = deps.memory ?? owned(connectMemory(config.memoryAddr, signer!), defer);
    const search = deps.search ?? owned(connectSearch(config.searchAddr, signer!), defer);
    const metrics = deps.metrics ?? createGatewayMetrics();
    // /ready asks over the very channels requests use: a fresh probe connection could succeed while
    // the serving channel still sits in reconnect backoff.
    const peers = deps.peers ?? { memory: () => memory.health(), search: () => search.health() };
    const limits = await createRateLimits(config.rateLimits, { log, metrics });
    defer(() => limits.close());
    const mcp = createMcpEndpoint({ memory, search, log, metrics, completionLimiter: limits.completion });
    // The issuer is PUBLIC_URL, or (local and standalone runs) the URL we end up listening on.
    let listeningUrl = "";
    const location = oauthLocation(() => config.publicUrl ?? listeningUrl);
    // The server's own origins join the configured ones once the listening URL is known.
    let allowedOrigins: readonly string[] = config.allowedOrigins;
    // A generated secret keeps a single process working; replicas need the shared UI_SESSION_SECRET.
    if (config.uiSessionSecret === undefined)
      log.info("review ui sessions signed with a per-process secret (set UI_SESSION_SECRET to share them across replicas)");
    const app = createGatewayApp({
      memory,
      search,
      log,
      metrics,
      peers,
      mcp,
      limits,
      trustProxy: config.trustProxy,
      allowedOrigins: () => allowedOrigins,
      ...(deps.resolveApiKey ? { resolveApiKey: deps.resolveApiKey } : {}),
      ui: { sessionSecret: config.uiSessionSecret ?? generateSessionSecret(), secureCookies: config.publicUrl?.startsWith("https:") ?? false },
      oauth: { location, clientMetadataFetcher: deps.clientMetadataFetcher ?? createClientMetadataFetcher({ ...config.cimd, logger: log }) },
    });

    const server = await new Promise<Server>((resolve, reject) => {
      const s = app.listen(config.port, config.host, (err?: Error) => (err ? reject(err) : resolve(s)));
    });
    defer(() => drain(server, mcp));
    const { port, address } = server.address() as AddressInfo;
    const url = `http://${hostForUrl(address)}:${port}`;
    listeningUrl = url;
    allowedOrigins = [...new Set([...config.allowedOrigins, ...selfOrigins([url, config.publicUrl])])];
    log.info(
      {
        url,
        ui: `${config.publicUrl?.replace(/\/$/, "") ?? url}/ui`,
        publicUrl: config.publicUrl,
        issuer: location.issuer(),
        memory: config.memoryAddr,
        search: config.searchAddr,
        rateLimits: limits.backend,
      },
      "gateway listening",
    );
    return { port, url };
  });
}

/** A peer this gateway connected itself, closed with it. */
function owned<P extends { close(): void }>(peer: P, defer: Defer): P {
  defer(() => peer.close());
  return peer;
}

/**
 * Stops accepting connections, closes the MCP sessions, and waits for in-flight requests; after
 * CLOSE_GRACE_MS whatever is still open is cut.
 */
async function drain(server: Server, mcp: { close(): Promise<void> }): Promise<void> {
  const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const timer = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
  timer.unref();
  try {
    await mcp.close();
    await stopped;
  } finally {
    clearTimeout(timer);
  }
}

/** A wildcard bind is reached on loopback; IPv6 literals need brackets. */
function hostForUrl(address: string): string {
  if (address === "0.0.0.0") return "127.0.0.1";
  if (address === "::") return "[::1]";
  return address.includes(":") ? `[${address}]` : address;
}
