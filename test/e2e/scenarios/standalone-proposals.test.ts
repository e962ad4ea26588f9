/**
 * Proposals in standalone mode: the same job code on the in-process queue. A remembered measure is
 * extracted by the consolidator inside the one process, listed by review_proposals and on the
 * review web UI the banner points at, and readable through get_facts once accepted there.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Browser, csrfOf } from "../../support/browser.js";
import { connectMcp } from "../../support/mcp.js";
import { eventually, type ServiceProcess } from "../../support/processes.js";
import { startStandalone } from "../../support/standalone.js";

const dataDir = mkdtempSync(join(tmpdir(), "3ngram-standalone-proposals-"));
let proc: ServiceProcess | undefined;

afterAll(async () => {
  await proc?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

interface ListOut {
  count: number;
  factProposals?: Array<{ id: string; memoryId: string; subject: string; predicate: string; value: string }>;
}

describe("standalone server: proposals", () => {
  it("extracts a fact proposal on the in-process queue, and accepting it on the web UI makes get_facts return it", async () => {
    // The hashing embedder keeps start-up quick; the queue and job code are what this checks.
    const server = await startStandalone(dataDir, { EMBEDDINGS_PROVIDER: "hashing" });
    proc = server.proc;
    const mcp = await connectMcp(server.mcpUrl, server.apiKey);
    try {
      const stored = await mcp.call<{ memory: { id: string } }>("remember", { memoryType: "fact", topic: "Back squat", content: "Top set 98 kg today." });
      await eventually(async () => expect((await mcp.call<ListOut>("review_proposals", { action: "list" })).factProposals).toHaveLength(1), 30_000);
      const [proposal] = (await mcp.call<ListOut>("review_proposals", { action: "list" })).factProposals!;
      expect(proposal).toMatchObject({ memoryId: stored.memory.id, subject: "back_squat", predicate: "top_set.weight_kg", value: "98" });
      const uiUrl = new URL(server.field("Web UI"));
      expect(uiUrl.pathname).toBe("/ui");
      const browser = new Browser(uiUrl.origin);
      expect((await browser.signIn(server.apiKey)).status).toBe(303);
      const list = await browser.get("/ui/proposals");
      expect(list.html).toContain(`/ui/proposals/${proposal!.id}`);
      expect(await browser.post(`/ui/proposals/${proposal!.id}/accept`, { csrf_token: csrfOf(list) })).toMatchObject({ status: 303 });
      const facts = await mcp.call<{ facts: Array<{ predicate: string; value: string }> }>("get_facts", { subject: "back_squat" });
      expect(facts.facts.map((f) => `${f.predicate} = ${f.value}`)).toEqual(["top_set.weight_kg = 98"]);
    } finally {
      await mcp.close();
    }
  }, 120_000);
});
