/**
 * `make run`'s server: one process, embedded PostgreSQL, the bundled offline embedding model.
 * Driven exactly as the README tells a user: read the printed URL and key, connect an MCP client.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { connectMcp } from "../../support/mcp.js";
import { obtainTokens } from "../../support/oauth.js";
import { REPO_ROOT, startServiceProcess, type ServiceProcess } from "../../support/processes.js";
import { startStandalone, type StandaloneServer } from "../../support/standalone.js";

const dataDir = mkdtempSync(join(tmpdir(), "3ngram-standalone-"));
const running: ServiceProcess[] = [];

async function startServer(): Promise<StandaloneServer> {
  // The scenario checks that the bundled model embeds a write inline; a generous budget keeps that
  // true on a loaded machine (the budget's pending fallback has its own tests).
  const server = await startStandalone(dataDir, { EMBED_INLINE_BUDGET_MS: "30000" });
  running.push(server.proc);
  return server;
}

afterAll(async () => {
  for (const proc of running) await proc.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

interface SearchOut {
  hits: Array<{ id: string; topic: string }>;
}

describe("standalone server", () => {
  it("prints how to connect, answers MCP, and keeps data across a restart", async () => {
    const first = await startServer();
    expect(first.proc.output()).toContain("claude mcp add --transport http 3ngram");
    // Where the data is, as THREENGRAM_DATA_DIR set it (not the default ./data).
    expect(first.proc.output()).toContain(`Data lives in ${dataDir}.`);
    const mcp = await connectMcp(first.mcpUrl, first.apiKey);
    const tea = await mcp.call<{ memory: { id: string }; embedded: string }>("remember", {
      memoryType: "preference",
      topic: "drinks",
      content: "The user drinks green tea in the morning and never coffee.",
    });
    expect(tea.embedded).toBe("done");
    await mcp.call("remember", {
      memoryType: "decision",
      topic: "hosting",
      content: "The team will host the API on Kubernetes in Frankfurt.",
    });
    const found = await mcp.call<SearchOut>("search", { query: "what does the user like to drink" });
    expect(found.hits[0]?.id).toBe(tea.memory.id);

    // Changes since a briefing, and erasure, work on the embedded database too (snapshots, the
    // SECURITY DEFINER eraser). The operator commands reach it through the printed database URL.
    const before = await mcp.call<{ changesCursor: string }>("briefing", { selector: { kind: "all" } });
    const slip = await mcp.call<{ memory: { id: string } }>("remember", { memoryType: "decision", topic: "slip", content: "A decision stored by mistake." });
    const delta = await mcp.call<{ recentDecisions: { items: Array<{ id: string; change?: string }> } }>("briefing", {
      selector: { kind: "all" },
      since: before.changesCursor,
    });
    expect(delta.recentDecisions.items.map((i) => [i.change, i.id])).toEqual([["new", slip.memory.id]]);
    const admin = await promisify(execFile)(
      process.execPath,
      [join(REPO_ROOT, "services/memory/dist/cli.js"), "create-key", first.field("Tenant"), "eraser", "--erase"],
      {
        env: { ...process.env, DATABASE_URL: first.databaseUrl },
      },
    );
    const eraseKey = (JSON.parse(admin.stdout) as { apiKey: string }).apiKey;
    const erased = await fetch(`${first.url}/api/v1/memories/${slip.memory.id}/erase`, {
      method: "POST",
      headers: { Authorization: `Bearer ${eraseKey}`, "Content-Type": "application/json" },
      body: JSON.stringify({ reason: "mistake" }),
    });
    expect(erased.status).toBe(200);
    const read = await mcp.call<{ memories: Array<{ content: string; erasedAt?: string }> }>("get_memories", { ids: [slip.memory.id] });
    expect(read.memories[0]).toMatchObject({ content: "[erased]", erasedAt: expect.any(String) });
    await mcp.close();

    // OAuth works with zero configuration: the issuer is the listening URL, keys live in PGlite.
    const base = first.url;
    const metadata = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as { issuer: string };
    expect(new URL(metadata.issuer).port).toBe(new URL(base).port);
    const tokens = await obtainTokens(metadata.issuer, first.apiKey);
    const viaOAuth = await connectMcp(`${metadata.issuer}/mcp`, tokens.accessToken);
    const foundViaOAuth = await viaOAuth.call<SearchOut>("search", { query: "what does the user like to drink" });
    expect(foundViaOAuth.hits[0]?.id).toBe(tea.memory.id);
    await viaOAuth.close();

    // A second server on the same data directory must refuse rather than corrupt it.
    const intruder = startServiceProcess("intruder", "standalone/dist/main.js", { THREENGRAM_DATA_DIR: dataDir, PORT: "0", LOG_LEVEL: "warn" });
    running.push(intruder);
    expect(await intruder.exited()).toBe(1);
    expect(intruder.output()).toMatch(/in use by process/);

    expect(await first.proc.stop()).toBe(0);

    const second = await startServer();
    expect(second.apiKey).toBe(first.apiKey);
    const again = await connectMcp(second.mcpUrl, second.apiKey, { modern: true });
    const stillThere = await again.call<SearchOut>("search", { query: "where is the API hosted" });
    expect(stillThere.hits.map((h) => h.topic)).toEqual(["hosting", "drinks"]);
    await again.close();
  }, 180_000);
});
