import { signingKeyEnv } from "@3ngram/rpc";
import { envLogLevel, envPort } from "@3ngram/runtime";
import { z } from "zod";
import { normalizeOrigin } from "./http/origin.js";
import { CIMD_DEFAULTS, MAX_CIMD_REDIRECTS } from "./oauth/cimd/create-fetcher.js";
import { parseTrustProxy } from "./http/trust-proxy.js";

/** A budget in requests per minute. */
const perMinute = (fallback: number) => z.coerce.number().int().min(1).max(1_000_000).default(fallback);

/** The environment the gateway reads, parsed once at boot by main.ts and passed down as a value. */
export const gatewayConfigSchema = z
  .object({
    PORT: envPort(8080),
    HOST: z.string().min(1).default("0.0.0.0"),
    MEMORY_ADDR: z.string().min(1).default("127.0.0.1:50051"),
    SEARCH_ADDR: z.string().min(1).default("127.0.0.1:50052"),
    /** Private Ed25519 JWK (JSON) the gateway signs its per-call service credentials with. */
    SERVICE_SIGNING_JWK: signingKeyEnv,
    /**
     * Comma-separated browser origins allowed to call /mcp, e.g. "https://claude.ai,https://app.example.com",
     * besides the server's own (the listening URL and PUBLIC_URL, added once the gateway listens).
     */
    MCP_ALLOWED_ORIGINS: z
      .string()
      .default("")
      .transform((raw, ctx) => {
        const origins: string[] = [];
        for (const entry of raw
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean)) {
          const origin = normalizeOrigin(entry);
          if (origin === undefined) {
            ctx.addIssue({ code: "custom", message: `not an origin: ${entry}` });
            return z.NEVER;
          }
          origins.push(origin);
        }
        return origins;
      }),
    /** Where clients reach this gateway from outside (its origin is allowed on /mcp too). */
    // The scheme lower-cased (a URL's scheme is case-insensitive): `HTTPS://…` still means secure
    // cookies and an https issuer. Nothing else is rewritten, so the issuer keeps its spelling.
    PUBLIC_URL: z
      .url({ protocol: /^https?$/i })
      .transform((url) => url.replace(/^[a-z]+:/i, (scheme) => scheme.toLowerCase()))
      .optional(),
    /** completion/complete requests each user may make per minute. */
    MCP_COMPLETIONS_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(120),
    /** Deadline for fetching one Client ID Metadata Document, redirects and body included. */
    OAUTH_CIMD_TIMEOUT_MS: z.coerce.number().int().min(500).max(30_000).default(CIMD_DEFAULTS.timeoutMs),
    /** Redirects followed when fetching a metadata document; 0 (the draft's rule) refuses any redirect. */
    OAUTH_CIMD_MAX_REDIRECTS: z.coerce.number().int().min(0).max(MAX_CIMD_REDIRECTS).default(CIMD_DEFAULTS.maxRedirects),
    /** Metadata documents kept in the in-process cache (least recently used evicted). */
    OAUTH_CIMD_CACHE_ENTRIES: z.coerce.number().int().min(1).max(100_000).default(CIMD_DEFAULTS.cacheEntries),
    /** Set: rate limits are counted in this Redis and shared by every gateway instance. Unset: per process (standalone). */
    REDIS_URL: z.url({ protocol: /^rediss?$/, error: "REDIS_URL must be a redis:// or rediss:// URL" }).optional(),
    /** Namespace of the rate-limit keys in Redis. */
    RATE_LIMIT_KEY_PREFIX: z
      .string()
      .regex(/^[A-Za-z0-9:_.-]{1,100}$/, "letters, digits and : _ . - only")
      .default("3ngram:rl"),
    /** Edge budget per client address on /mcp, /api/v1, /oauth and /ui, counted before authentication. */
    RATE_LIMIT_IP_PER_MINUTE: perMinute(600),
    /** Budget per user (tenant + user), across all of the user's credentials. */
    RATE_LIMIT_USER_PER_MINUTE: perMinute(300),
    /** Budget per credential (an API key, or one OAuth client's grant for one user). */
    RATE_LIMIT_KEY_PER_MINUTE: perMinute(300),
    /** Which proxies in front of the gateway to believe about the client address: "false" (default), a hop count, or addresses/CIDRs. */
    TRUST_PROXY: z
      .string()
      .default("false")
      .transform((raw, ctx) => {
        const parsed = parseTrustProxy(raw);
        if (typeof parsed === "string") {
          ctx.addIssue({ code: "custom", message: parsed });
          return z.NEVER;
        }
        return parsed.value;
      }),
    /**
     * Signs the review UI's session cookies (HS256). Every gateway replica must share it, or a session
     * started on one is refused by the others; unset, each process generates its own.
     */
    UI_SESSION_SECRET: z.string().min(32, "UI_SESSION_SECRET must be at least 32 characters").optional(),
    LOG_LEVEL: envLogLevel,
  })
  .transform((env) => {
    const allowedOrigins = [...env.MCP_ALLOWED_ORIGINS];
    const publicOrigin = env.PUBLIC_URL === undefined ? undefined : normalizeOrigin(env.PUBLIC_URL);
    if (publicOrigin !== undefined && !allowedOrigins.includes(publicOrigin)) allowedOrigins.push(publicOrigin);
    return {
      port: env.PORT,
      host: env.HOST,
      memoryAddr: env.MEMORY_ADDR,
      searchAddr: env.SEARCH_ADDR,
      serviceSigningJwk: env.SERVICE_SIGNING_JWK,
      allowedOrigins,
      publicUrl: env.PUBLIC_URL,
      logLevel: env.LOG_LEVEL,
      uiSessionSecret: env.UI_SESSION_SECRET,
      /** Options for createClientMetadataFetcher (oauth/cimd). */
      cimd: { timeoutMs: env.OAUTH_CIMD_TIMEOUT_MS, maxRedirects: env.OAUTH_CIMD_MAX_REDIRECTS, cacheEntries: env.OAUTH_CIMD_CACHE_ENTRIES },
      trustProxy: env.TRUST_PROXY,
      rateLimits: {
        redisUrl: env.REDIS_URL,
        keyPrefix: env.RATE_LIMIT_KEY_PREFIX,
        ipPerMinute: env.RATE_LIMIT_IP_PER_MINUTE,
        userPerMinute: env.RATE_LIMIT_USER_PER_MINUTE,
        keyPerMinute: env.RATE_LIMIT_KEY_PER_MINUTE,
        completionsPerMinute: env.MCP_COMPLETIONS_PER_MINUTE,
      },
    };
  });

export type GatewayConfig = z.output<typeof gatewayConfigSchema>;
