import { createLogger, loadConfig } from "@3ngram/runtime";
import type { ServiceKeyPair } from "@3ngram/rpc";
import { gatewayConfigSchema, type GatewayConfig } from "../../src/config.js";
import { startGateway, type GatewayDeps, type RunningGateway } from "../../src/gateway.js";

/** Gateway config for tests: loopback, any free port, pointing at the given peers. */
export function testConfig(peers: { memoryAddr: string; searchAddr: string; signingJwk: ServiceKeyPair["privateJwk"] }, extra: Record<string, string> = {}): GatewayConfig {
  return loadConfig(gatewayConfigSchema, {
    PORT: "0",
    HOST: "127.0.0.1",
    MEMORY_ADDR: peers.memoryAddr,
    SEARCH_ADDR: peers.searchAddr,
    SERVICE_SIGNING_JWK: JSON.stringify(peers.signingJwk),
    MCP_ALLOWED_ORIGINS: "https://app.example.com",
    LOG_LEVEL: "silent",
    ...extra,
  });
}

export async function startTestGateway(
  peers: { memoryAddr: string; searchAddr: string; signingJwk: ServiceKeyPair["privateJwk"] },
  deps: GatewayDeps = {},
): Promise<RunningGateway> {
  return startGateway(testConfig(peers), { log: createLogger({ service: "gateway", level: "silent" }), ...deps });
}
