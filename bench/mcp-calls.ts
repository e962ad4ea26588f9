/**
 * What a tools/call costs through the gateway's /mcp endpoint, on a corpus small enough that the
 * services' own work is a small, constant share: real memory and search services (test
 * PostgreSQL and Redis), the gateway in this process, the official MCP client, N sequential
 * `search` calls with one query (so the search service answers from its query cache). Prints the
 * latency percentiles and this process's CPU per call (client, gateway and services together: a
 * change in the gateway shows as a change in the total).
 *
 *   npm run bench:mcp -- [--calls 300] [--modern]
 *   … --gateway <dir>       the gateway's compiled dist to import (default: the workspace's), e.g. a
 *                           copy of a previous build, so two builds can be measured in alternation
 *   … --profile <file>      writes a V8 CPU profile of the measured calls (open it in DevTools)
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import type { GatewayConfig, RunningGateway } from "@3ngram/gateway";
import { createLogger, loadConfig } from "@3ngram/runtime";
import { startCoreServices } from "../test/support/core-services.js";
import { connectMcp } from "../test/support/mcp.js";
import { flagValue, percentiles } from "./stats.js";

interface GatewayModule {
  startGateway(config: GatewayConfig, deps: { log: ReturnType<typeof createLogger> }): Promise<RunningGateway>;
  gatewayConfigSchema: Parameters<typeof loadConfig>[0];
}

/** Node's own import(): the module runner this script is loaded by has closed once main() runs. */
const nativeImport = new Function("specifier", "return import(specifier)") as (specifier: string) => Promise<unknown>;

const WARMUP_CALLS = 50;
const CORPUS = 40;

export async function main(argv: readonly string[]): Promise<number> {
  const calls = Number(flagValue(argv, "--calls") ?? 300);
  if (!Number.isInteger(calls) || calls < 10) throw new Error("usage: --calls <at least 10>");
  const gatewayDir = flagValue(argv, "--gateway");
  const profileFile = flagValue(argv, "--profile");
  const modern = argv.includes("--modern");
  const gatewayModule = (await nativeImport(
    gatewayDir === undefined ? "@3ngram/gateway" : pathToFileURL(resolve(gatewayDir, "index.js")).href,
  )) as GatewayModule;

  const core = await startCoreServices({ label: "bench-mcp-calls" });
  const log = createLogger({ service: "gateway", level: "silent" });
  const config = loadConfig(gatewayModule.gatewayConfigSchema, {
    PORT: "0",
    HOST: "127.0.0.1",
    MEMORY_ADDR: core.memoryAddress,
    SEARCH_ADDR: core.searchAddress,
    SERVICE_SIGNING_JWK: core.keys.signingJwk,
    LOG_LEVEL: "silent",
    RATE_LIMIT_IP_PER_MINUTE: "1000000",
    RATE_LIMIT_USER_PER_MINUTE: "1000000",
    RATE_LIMIT_KEY_PER_MINUTE: "1000000",
  }) as GatewayConfig;
  const gateway = await gatewayModule.startGateway(config, { log });
  const tenant = await core.createTenant("bench mcp calls");
  const mcp = await connectMcp(`${gateway.url}/mcp`, tenant.apiKey, { modern });
  try {
    for (let i = 0; i < CORPUS; i++) {
      await mcp.call("remember", {
        memoryType: i % 3 === 0 ? "decision" : "note",
        topic: `bench topic ${i}`,
        content: `We agreed on database option ${i} for the ingestion pipeline after comparing latency and cost.`,
        scope: "work",
        project: "atlas",
      });
    }
    const args = { query: "database option for the ingestion pipeline", limit: 5 };
    for (let i = 0; i < WARMUP_CALLS; i++) await mcp.call("search", args);

    const session = profileFile === undefined ? undefined : new Session();
    if (session !== undefined) {
      session.connect();
      await session.post("Profiler.enable");
      await session.post("Profiler.setSamplingInterval", { interval: 200 });
      await session.post("Profiler.start");
    }
    const samples: number[] = [];
    const cpuBefore = process.cpuUsage();
    const wallBefore = performance.now();
    for (let i = 0; i < calls; i++) {
      const started = performance.now();
      await mcp.call("search", args);
      samples.push(performance.now() - started);
    }
    const wallMs = performance.now() - wallBefore;
    const cpu = process.cpuUsage(cpuBefore);
    if (session !== undefined && profileFile !== undefined) {
      const { profile } = await session.post("Profiler.stop");
      writeFileSync(profileFile, JSON.stringify(profile));
      session.disconnect();
    }

    const p = percentiles(samples);
    const cpuMsPerCall = (cpu.user + cpu.system) / 1000 / calls;
    console.log(
      `${calls} search calls (${modern ? "2026-07-28" : "2025-11-25"} client, ${gatewayDir ?? "workspace gateway"}): ` +
        `p50 ${p.p50.toFixed(2)} ms, p95 ${p.p95.toFixed(2)} ms, p99 ${p.p99.toFixed(2)} ms; ` +
        `process CPU ${cpuMsPerCall.toFixed(2)} ms per call; wall ${(wallMs / 1000).toFixed(1)} s`,
    );
    return 0;
  } finally {
    await mcp.close();
    await gateway.close();
    await core.close();
  }
}
