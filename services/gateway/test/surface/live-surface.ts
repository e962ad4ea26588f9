/**
 * Reads the MCP surface the way a client sees it: a real gateway app over HTTP and the official
 * client on the 2026-07-28 path. Listing touches no peer, so the gateway's gRPC clients point at
 * nothing and the API key resolver answers with a fixed principal; no tool is ever called here.
 */
import { fileURLToPath } from "node:url";
import { SCOPES } from "@3ngram/rpc";
import { createLogger } from "@3ngram/runtime";
import { createTestKeys } from "../../../../test/support/keys.js";
import { startGateway } from "../../src/gateway.js";
import { testConfig } from "../support/gateway.js";
import { ERAS, connect } from "../support/mcp-client.js";

/** Where the committed surface files live: snapshot, utterances and eval bounds. */
export const SURFACE_DIR = fileURLToPath(new URL("../../surface/", import.meta.url));

export interface SurfaceSnapshot {
  instructions: string;
  tools: {
    name: string;
    title?: string;
    description?: string;
    annotations?: unknown;
    inputSchema: unknown;
    outputSchema?: unknown;
  }[];
  prompts: { name: string; title?: string; description?: string; arguments?: unknown }[];
  resourceTemplates: { name: string; title?: string; uriTemplate: string; description?: string; mimeType?: string }[];
}

export async function readLiveSurface(): Promise<SurfaceSnapshot> {
  const keys = await createTestKeys();
  const gateway = await startGateway(testConfig({ memoryAddr: "127.0.0.1:9", searchAddr: "127.0.0.1:9", signingJwk: keys.signingJwk }), {
    log: createLogger({ service: "gateway", level: "silent" }),
    resolveApiKey: async () => ({
      tenantId: "00000000-0000-7000-8000-000000000001",
      userId: "00000000-0000-7000-8000-000000000002",
      scopes: [SCOPES.read, SCOPES.write],
      expiresAt: Math.floor(Date.now() / 1000) + 3600,
    }),
  });
  const client = await connect(gateway.url, "surface-snapshot", ERAS[1]);
  try {
    const byName = <T extends { name: string }>(items: T[]) => [...items].sort((a, b) => a.name.localeCompare(b.name));
    const { tools } = await client.listTools();
    const { prompts } = await client.listPrompts();
    const { resourceTemplates } = await client.listResourceTemplates();
    return {
      instructions: client.getInstructions() ?? "",
      tools: byName(tools).map((t) => ({
        name: t.name,
        title: t.title,
        description: t.description,
        annotations: t.annotations,
        inputSchema: t.inputSchema,
        outputSchema: t.outputSchema,
      })),
      prompts: byName(prompts).map((p) => ({ name: p.name, title: p.title, description: p.description, arguments: p.arguments })),
      resourceTemplates: byName(resourceTemplates).map((r) => ({
        name: r.name,
        title: r.title,
        uriTemplate: r.uriTemplate,
        description: r.description,
        mimeType: r.mimeType,
      })),
    };
  } finally {
    await client.close();
    await gateway.close();
  }
}
