import type { TestKeys } from "./keys.js";

/**
 * What every service process of an end-to-end test shares: its database and Redis namespace, the
 * service keys, where memory and search listen, the fast hashing embedder, warn-level logs and no
 * metrics listener. Each process adds its own port and settings on top.
 */
export function serviceEnv(options: {
  databaseUrl: string;
  redisUrl: string;
  prefix: string;
  keys: TestKeys;
  memoryPort: number;
  searchPort: number;
}): Record<string, string> & { MEMORY_ADDR: string; SEARCH_ADDR: string } {
  return {
    DATABASE_URL: options.databaseUrl,
    SERVICE_TRUSTED_JWKS: options.keys.trustedJwks,
    SERVICE_SIGNING_JWK: options.keys.signingJwk,
    REDIS_URL: options.redisUrl,
    REDIS_KEY_PREFIX: options.prefix,
    EMBEDDINGS_PROVIDER: "hashing",
    METRICS_PORT: "0",
    LOG_LEVEL: "warn",
    GRPC_HOST: "127.0.0.1",
    MEMORY_ADDR: `127.0.0.1:${options.memoryPort}`,
    SEARCH_ADDR: `127.0.0.1:${options.searchPort}`,
  };
}

/**
 * A gateway process's own settings on top of `serviceEnv`: where it listens, and rate limits so
 * high that a load test measures the services rather than the limiter.
 */
export function loadGatewayEnv(port: number, prefix: string): Record<string, string> {
  return {
    PORT: String(port),
    HOST: "127.0.0.1",
    RATE_LIMIT_KEY_PREFIX: `${prefix}:rl`,
    RATE_LIMIT_IP_PER_MINUTE: "1000000",
    RATE_LIMIT_USER_PER_MINUTE: "1000000",
    RATE_LIMIT_KEY_PER_MINUTE: "1000000",
  };
}
