import { createLogger, loadConfig, type Logger } from "@3ngram/runtime";
import { gatewayConfigSchema, type GatewayConfig } from "../../src/config.js";
import { startGateway, type RunningGateway } from "../../src/gateway.js";

/** Where the gateway's peers listen, and the private JWK (JSON) they trust its credentials from. */
export interface GatewayPeers {
  memoryAddr: string;
  searchAddr: string;
  signingJwk: string;
}

/** Gateway config for tests: loopback, any free port, pointing at the given peers. */
export function testConfig(peers: GatewayPeers, extra: Record<string, string> = {}): GatewayConfig {
  return loadConfig(gatewayConfigSchema, {
    PORT: "0",
    HOST: "127.0.0.1",
    MEMORY_ADDR: peers.memoryAddr,
    SEARCH_ADDR: peers.searchAddr,
    SERVICE_SIGNING_JWK: peers.signingJwk,
    MCP_ALLOWED_ORIGINS: "https://app.example.com",
    LOG_LEVEL: "silent",
    // A contract file can make hundreds of requests a minute as one user from one address; with the
    // production budgets it would pass or fail by how fast the machine is. Rate-limit tests set
    // their own small budgets through `extra`.
    RATE_LIMIT_IP_PER_MINUTE: "1000000",
    RATE_LIMIT_USER_PER_MINUTE: "1000000",
    RATE_LIMIT_KEY_PER_MINUTE: "1000000",
    ...extra,
  });
}

/** A gateway wired exactly as in production (its own gRPC clients and health checks, built from config). */
export async function startTestGateway(peers: GatewayPeers, log?: Logger): Promise<RunningGateway> {
  return startGateway(testConfig(peers), { log: log ?? createLogger({ service: "gateway", level: "silent" }) });
}
