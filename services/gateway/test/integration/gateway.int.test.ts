/**
 * The gateway contract against the real memory and search services on a fresh PostgreSQL
 * database (the shared test/support helper), reached over real gRPC with real API keys.
 */
import { randomUUID } from "node:crypto";
import { createTenantWithKey } from "@3ngram/memory";
import { SCOPES } from "@3ngram/rpc";
import { createLogger, loadConfig } from "@3ngram/runtime";
import { getMemoriesOutputSchema, rememberOutputSchema } from "@3ngram/schema";
import { describe, expect, it } from "vitest";
import { startCoreServices } from "../../../../test/support/core-services.js";
import { gatewayConfigSchema } from "../../src/config.js";
import { startGateway } from "../../src/gateway.js";
import { gatewayContract } from "../support/contract.js";
import { ERAS, callTool, connect, errorText } from "../support/mcp-client.js";

gatewayContract(
  "gateway contract (real memory and search)",
  async () => {
    const core = await startCoreServices({ label: "gateway" });
    try {
      const readWrite = await core.createTenant("gateway tenant a");
      const otherTenant = await core.createTenant("gateway tenant b");
      const readOnly = await createTenantWithKey(core.ownerPool, { tenantName: "gateway read-only", scopes: [SCOPES.read] });
      const config = loadConfig(gatewayConfigSchema, {
        PORT: "0",
        HOST: "127.0.0.1",
        MEMORY_ADDR: core.memoryAddress,
        SEARCH_ADDR: core.searchAddress,
        SERVICE_SIGNING_JWK: core.keys.signingJwk,
        MCP_ALLOWED_ORIGINS: "https://app.example.com",
      });
      const gateway = await startGateway(config, { log: createLogger({ service: "gateway", level: process.env.TEST_LOG_LEVEL ?? "silent" }) });
      return {
        url: gateway.url,
        allowedOrigin: "https://app.example.com",
        keys: { readWrite: readWrite.apiKey, readOnly: readOnly.apiKey, otherTenant: otherTenant.apiKey },
        async close() {
          await gateway.close();
          await core.close();
        },
      };
    } catch (err) {
      await core.close();
      throw err;
    }
  },
  (harness) => {
    describe("reasons from the real services", () => {
      it("a live duplicate is duplicate_memory with the existing id, on MCP and REST", async () => {
        const h = harness();
        const content = `Duplicate guard check ${randomUUID()}`;
        const client = await connect(h.url, h.keys.readWrite, ERAS[1]);
        const first = rememberOutputSchema.parse((await callTool(client, "remember", { memoryType: "fact", topic: "dup", content })).structuredContent);
        expect(errorText(await callTool(client, "remember", { memoryType: "fact", topic: "dup", content }))).toMatch(
          new RegExp(`^duplicate_memory: .*${first.memory.id}`),
        );
        await client.close();
        const res = await fetch(`${h.url}/api/v1/memories`, {
          method: "POST",
          headers: { Authorization: `Bearer ${h.keys.readWrite}`, "Content-Type": "application/json" },
          body: JSON.stringify({ memoryType: "fact", topic: "dup", content }),
        });
        expect(res.status).toBe(409);
        expect(await res.json()).toMatchObject({ error: "duplicate_memory", ids: { existing: first.memory.id } });
      });

      it("get_memories bounds content per item and says so", async () => {
        const h = harness();
        const client = await connect(h.url, h.keys.readWrite, ERAS[0]);
        const content = `${randomUUID()} ${"long content ".repeat(150)}`.slice(0, 2000).trim();
        const stored = rememberOutputSchema.parse((await callTool(client, "remember", { memoryType: "note", topic: "long", content })).structuredContent);
        const out = getMemoriesOutputSchema.parse(
          (await callTool(client, "get_memories", { ids: [stored.memory.id], maxContentChars: 600 })).structuredContent,
        );
        expect(out.memories[0]).toMatchObject({ truncated: true, contentLength: content.length });
        expect(out.memories[0]!.content.length).toBeLessThanOrEqual(600);
        await client.close();
      });
    });
  },
);
