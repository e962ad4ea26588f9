/**
 * The review web UI end to end: a real gateway over HTTP in front of the real memory and search
 * services on PostgreSQL, driven like a browser (cookies, forms, CSRF fields read from the pages).
 * Proposals are handed over the way the consolidator does it (internal gRPC); their outcomes are
 * checked through the memory service's own reads (GetFacts, GetMemories, ListProposals).
 */
import { randomUUID } from "node:crypto";
import { createTenantWithKey, type CreatedTenant } from "@3ngram/memory";
import { SCOPES, type CallOptions } from "@3ngram/rpc";
import { createLogger } from "@3ngram/runtime";
import { SignJWT, decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reader, writer } from "../../../../test/support/calls.js";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { startGateway, type RunningGateway } from "../../src/gateway.js";
import { createSessionCodec, SESSION_TTL_SECONDS } from "../../src/ui/session.js";
import { Browser, csrfOf, lastSetCookie } from "../../../../test/support/browser.js";
import { testConfig } from "../support/gateway.js";
import { capturedLog } from "../support/captured-log.js";

type Tenant = { tenantId: string; userId: string; apiKey: string };

const SESSION_SECRET = "web-ui-test-secret-0123456789-abcdefghij";
/** Codecs here only mint cookies; the gateway under test verifies them, membership check included. */
const mintOnly = {
  membership: () => Promise.reject(new Error("a minting codec verifies nothing")),
};
const HOSTILE = `<script>alert("x")</script> & 'quoted' "text"`;

let core: CoreServices;
let gateway: RunningGateway;
let tenantA: Tenant;
let tenantB: Tenant;
let readOnly: CreatedTenant;
const { log: gatewayLog, lines: logLines } = capturedLog();

const asConsolidator = (t: { tenantId: string }): CallOptions => ({ identity: { tenantId: t.tenantId, scopes: [SCOPES.internalConsolidate] } });

beforeAll(async () => {
  core = await startCoreServices({ label: "gateway-web-ui" });
  tenantA = await core.createTenant("web ui a");
  tenantB = await core.createTenant("web ui b");
  readOnly = await createTenantWithKey(core.ownerPool, { tenantName: "web ui read-only", scopes: [SCOPES.read] });
  const config = testConfig(
    { memoryAddr: core.memoryAddress, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk },
    { PUBLIC_URL: "https://review.example.com", UI_SESSION_SECRET: SESSION_SECRET, LOG_LEVEL: "debug" },
  );
  gateway = await startGateway(config, { log: gatewayLog });
});
afterAll(async () => {
  await gateway?.close();
  await core?.close();
});

async function remember(t: Tenant | CreatedTenant, topic: string, content: string): Promise<string> {
  const memory = await core.publicMemoryClient();
  return (await memory.memories.remember({ memoryType: "decision", topic, content }, writer(t))).memory!.id;
}

/** Two memories and a supersedes proposal from the newer to the older. */
async function edgeProposal(t: Tenant | CreatedTenant, label = "plain") {
  const memory = await core.publicMemoryClient();
  const older = await remember(t, `older ${label}`, `older content ${label} ${randomUUID()}`);
  const newer = await remember(t, `newer ${label}`, `newer content ${label} ${randomUUID()}`);
  const created = await memory.proposals.createConsolidationProposals(
    { proposals: [{ fromId: newer, toId: older, edgeType: "supersedes", similarity: 0.95, rationale: "cosine 0.950 >= 0.92" }] },
    asConsolidator(t),
  );
  return { older, newer, id: created.createdIds[0]! };
}

/** A memory and one fact proposal read from it. */
async function factProposal(t: Tenant | CreatedTenant, value = "98") {
  const memory = await core.publicMemoryClient();
  const subject = `lift_${randomUUID().slice(0, 8)}`;
  const memoryId = await remember(t, "lift", `Top set ${value} kg ${randomUUID()}`);
  const created = await memory.proposals.createFactProposals(
    { memoryId, extractor: "rules/1", facts: [{ subject, predicate: "top_set.weight_kg", value, confidence: 0.8, rationale: "rule:measure(kg)" }] },
    asConsolidator(t),
  );
  return { memoryId, subject, id: created.createdIds[0]! };
}

async function statusOf(t: Tenant | CreatedTenant, id: string): Promise<string | undefined> {
  const memory = await core.publicMemoryClient();
  for (const status of ["proposed", "applied", "rejected"] as const) {
    const list = await memory.proposals.listProposals({ status, limit: 100 }, reader(t));
    if ([...list.proposals, ...(list.factProposals ?? [])].some((p) => p.id === id)) return status;
  }
  return undefined;
}

async function signedIn(t: { apiKey: string }): Promise<Browser> {
  const browser = new Browser(gateway.url);
  const answer = await browser.signIn(t.apiKey);
  expect(answer.status).toBe(303);
  return browser;
}

function expectPageHeaders(headers: Headers): void {
  const csp = headers.get("content-security-policy") ?? "";
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).not.toMatch(/script-src|unsafe-inline/);
  expect(headers.get("x-frame-options")).toBe("DENY");
  expect(headers.get("referrer-policy")).toBe("no-referrer");
  expect(headers.get("cache-control")).toBe("no-store");
}

describe("signing in", () => {
  it("sends a visitor without a session to the sign-in page", async () => {
    const browser = new Browser(gateway.url);
    expect(await browser.get("/ui/")).toMatchObject({ status: 302, location: "/ui/overview" });
    expect(await browser.get("/ui/proposals")).toMatchObject({ status: 303, location: "/ui/sign-in" });
    const form = await browser.get("/ui/sign-in");
    expect(form.status).toBe(200);
    expectPageHeaders(form.headers);
    expect(form.html).toContain('<label for="api_key">');
    expect(lastSetCookie(browser, "ui_csrf")).toMatch(/HttpOnly/);
  });

  it("turns a valid key into a signed session cookie that holds no key", async () => {
    const browser = new Browser(gateway.url);
    const answer = await browser.signIn(tenantA.apiKey);
    expect(answer).toMatchObject({ status: 303, location: "/ui/overview" });
    const line = lastSetCookie(browser, "ui_session")!;
    expect(line).toBeDefined();
    const attributes = line
      .split(";")
      .slice(1)
      .map((a) => a.trim().toLowerCase());
    expect(attributes).toEqual(expect.arrayContaining(["httponly", "secure", "samesite=strict", "path=/ui", `max-age=${SESSION_TTL_SECONDS}`]));
    const token = browser.cookies.get("ui_session")!;
    // Keys are 3ng_<8-character prefix>_<secret>; prefix and secret may both contain "_".
    const secretPart = tenantA.apiKey.slice("3ng_".length + 8 + 1);
    expect(secretPart.length).toBe(43);
    expect(token).not.toContain(tenantA.apiKey);
    expect(token).not.toContain(secretPart);
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({ sub: tenantA.userId, tid: tenantA.tenantId, scope: `${SCOPES.read} ${SCOPES.write}`, aud: "3ngram-ui" });
    expect(claims.exp! - claims.iat!).toBe(SESSION_TTL_SECONDS);
    expect(JSON.stringify(claims)).not.toContain(secretPart);
    // The sign-in form's CSRF cookie is spent.
    expect(browser.cookies.has("ui_csrf")).toBe(false);
    expect((await browser.get("/ui/proposals")).status).toBe(200);
  });

  it("refuses an unknown key and sets no session", async () => {
    const browser = new Browser(gateway.url);
    const answer = await browser.signIn(`3ng_AAAAAAAA_${"x".repeat(43)}`);
    expect(answer.status).toBe(401);
    expect(answer.html).toContain("That API key was not accepted.");
    expect(browser.cookies.has("ui_session")).toBe(false);
  });

  it("refuses a sign-in form without its CSRF cookie", async () => {
    const browser = new Browser(gateway.url);
    const form = await browser.get("/ui/sign-in");
    browser.cookies.delete("ui_csrf");
    const answer = await browser.post("/ui/sign-in", { csrf_token: csrfOf(form), api_key: tenantA.apiKey });
    expect(answer.status).toBe(403);
    expect(browser.cookies.has("ui_session")).toBe(false);
  });

  it("sends an expired or foreign session back to sign-in", async () => {
    const nineHoursAgo = Date.now() - 9 * 60 * 60 * 1000;
    const principal = { tenantId: tenantA.tenantId, userId: tenantA.userId, scopes: [SCOPES.read, SCOPES.write], expiresAt: 0 };
    const expired = (await createSessionCodec(SESSION_SECRET, { ...mintOnly, now: () => nineHoursAgo }).issue(principal)).token;
    const foreign = (await createSessionCodec("another-secret-that-is-long-enough-000", mintOnly).issue(principal)).token;
    const fresh = (await createSessionCodec(SESSION_SECRET, mintOnly).issue(principal)).token;
    for (const [token, expected] of [
      [expired, 303],
      [foreign, 303],
      [fresh, 200],
    ] as const) {
      const browser = new Browser(gateway.url);
      browser.cookies.set("ui_session", token);
      const answer = await browser.get("/ui/proposals");
      expect(answer.status).toBe(expected);
      if (expected === 303) expect(answer.location).toBe("/ui/sign-in");
    }
  });

  it("sends a session whose user is not in its tenant back to sign-in, and shows nothing of that tenant", async () => {
    const secretOfB = await remember(tenantB, "tenant b only", `tenant b's own memory ${randomUUID()}`);
    // Signed with the real session secret: only the claims are wrong, A's user named in B's tenant.
    const crossed = { tenantId: tenantB.tenantId, userId: tenantA.userId, scopes: [SCOPES.read, SCOPES.write], expiresAt: 0 };
    const token = (await createSessionCodec(SESSION_SECRET, mintOnly).issue(crossed)).token;
    for (const path of ["/ui/overview", `/ui/memories/${secretOfB}`, "/ui/search?q=tenant"]) {
      const browser = new Browser(gateway.url);
      browser.cookies.set("ui_session", token);
      const answer = await browser.get(path);
      expect(answer, path).toMatchObject({ status: 303, location: "/ui/sign-in" });
      expect(answer.html).not.toContain("tenant b");
    }
    // The control: B's own user signs in and reads it.
    const own = await signedIn(tenantB);
    expect((await own.get(`/ui/memories/${secretOfB}`)).status).toBe(200);
  });

  it("sends a session dated a day ahead back to sign-in", async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ tid: tenantA.tenantId, scope: `${SCOPES.read} ${SCOPES.write}` })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setSubject(tenantA.userId)
      .setAudience("3ngram-ui")
      .setJti(randomUUID())
      .setIssuedAt(now + 86_400)
      .setExpirationTime(now + 3600)
      .sign(new TextEncoder().encode(SESSION_SECRET));
    const browser = new Browser(gateway.url);
    browser.cookies.set("ui_session", token);
    expect(await browser.get("/ui/overview")).toMatchObject({ status: 303, location: "/ui/sign-in" });
  });

  it("signs out: the cookie is cleared and the next page asks to sign in", async () => {
    const browser = await signedIn(tenantA);
    const list = await browser.get("/ui/proposals");
    expect(list.html).toContain('action="/ui/sign-out"');
    const refused = await browser.post("/ui/sign-out", { csrf_token: "wrong" });
    expect(refused.status).toBe(403);
    expect(browser.cookies.has("ui_session")).toBe(true);
    const out = await browser.post("/ui/sign-out", { csrf_token: csrfOf(list) });
    expect(out).toMatchObject({ status: 303, location: "/ui/sign-in" });
    expect(lastSetCookie(browser, "ui_session")).toMatch(/Path=\/ui/);
    expect(browser.cookies.has("ui_session")).toBe(false);
    expect(await browser.get("/ui/proposals")).toMatchObject({ status: 303, location: "/ui/sign-in" });
  });
});

describe("reviewing proposals", () => {
  it("lists pending proposals of both kinds, escaped, with the page headers", async () => {
    const tenant = await core.createTenant("web ui listing");
    const memory = await core.publicMemoryClient();
    const older = await remember(tenant, `older ${HOSTILE}`, "older");
    const newer = await remember(tenant, `newer ${HOSTILE}`, "newer");
    const edge = (
      await memory.proposals.createConsolidationProposals(
        { proposals: [{ fromId: newer, toId: older, edgeType: "updates", similarity: 0.9 }] },
        asConsolidator(tenant),
      )
    ).createdIds[0]!;
    const memoryId = await remember(tenant, "weights", "Top set 100 kg");
    const fact = (
      await memory.proposals.createFactProposals(
        { memoryId, extractor: "rules/1", facts: [{ subject: "lift", predicate: "top_set.weight_kg", value: HOSTILE }] },
        asConsolidator(tenant),
      )
    ).createdIds[0]!;

    const browser = await signedIn(tenant);
    const page = await browser.get("/ui/proposals");
    expect(page.status).toBe(200);
    expectPageHeaders(page.headers);
    expect(page.html).toContain(`href="/ui/proposals/${edge}"`);
    expect(page.html).toContain(`href="/ui/proposals/${fact}"`);
    expect(page.html).not.toContain("<script>");
    expect(page.html).not.toContain(`"text"`);
    expect(page.html).toContain("&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62; &#38; &#39;quoted&#39; &#34;text&#34;");
    expect(page.html).toContain('<link rel="stylesheet" href="/ui/style.css">');
    const css = await browser.get("/ui/style.css");
    expect(css.status).toBe(200);
    expect(css.headers.get("content-type")).toMatch(/^text\/css/);
    // Nothing decided yet: the other tabs are empty.
    expect((await browser.get("/ui/proposals?status=applied")).html).not.toContain(edge);
  });

  it("pages with the REST route's limit and refuses a bad one with its field", async () => {
    const tenant = await core.createTenant("web ui paging");
    await edgeProposal(tenant, "one");
    await edgeProposal(tenant, "two");
    const browser = await signedIn(tenant);
    const first = await browser.get("/ui/proposals?limit=1");
    expect(first.html.match(/href="\/ui\/proposals\/[0-9a-f-]{36}"/g)).toHaveLength(1);
    expect(first.html).toContain('href="/ui/proposals?status=proposed&amp;limit=2"');
    const more = await browser.get("/ui/proposals?status=proposed&limit=2");
    expect(more.html.match(/href="\/ui\/proposals\/[0-9a-f-]{36}"/g)).toHaveLength(2);
    const bad = await browser.get("/ui/proposals?limit=500");
    expect(bad.status).toBe(400);
    expect(bad.html).toContain("(limit)");
  });

  it("shows an edge proposal with both memories side by side, escaped, and its decision forms", async () => {
    const tenant = await core.createTenant("web ui edge detail");
    const memory = await core.publicMemoryClient();
    const older = await remember(tenant, "older plan", `old ${HOSTILE}`);
    const newer = await remember(tenant, "newer plan", "new plan");
    const id = (
      await memory.proposals.createConsolidationProposals(
        { proposals: [{ fromId: newer, toId: older, edgeType: "supersedes", similarity: 0.97, rationale: HOSTILE }] },
        asConsolidator(tenant),
      )
    ).createdIds[0]!;
    const browser = await signedIn(tenant);
    const page = await browser.get(`/ui/proposals/${id}`);
    expect(page.status).toBe(200);
    expectPageHeaders(page.headers);
    expect(page.html).toContain("new plan");
    expect(page.html).toContain("old &#60;script&#62;");
    expect(page.html).not.toContain("<script>");
    expect(page.html).toContain(`href="/ui/memories/${older}"`);
    expect(page.html).toContain(`action="/ui/proposals/${id}/accept"`);
    expect(page.html).toContain(`action="/ui/proposals/${id}/reject"`);
    expect(page.html).toContain('<label for="rationale">');

    const view = await browser.get(`/ui/memories/${older}`);
    expect(view.status).toBe(200);
    expect(view.html).toContain("old &#60;script&#62;");
    expect(view.html).not.toContain("<script>");
  });

  it("accepting a fact proposal writes the fact GetFacts returns", async () => {
    const fact = await factProposal(tenantA, "102.5");
    const browser = await signedIn(tenantA);
    const page = await browser.get(`/ui/proposals/${fact.id}`);
    expect(page.html).toContain("102.5");
    expect(page.html).toContain("Top set 102.5 kg");
    const answer = await browser.post(`/ui/proposals/${fact.id}/accept`, { csrf_token: csrfOf(page) });
    expect(answer).toMatchObject({ status: 303, location: "/ui/proposals?done=applied" });
    expect((await browser.get(answer.location!)).html).toContain("Proposal accepted.");
    const memory = await core.publicMemoryClient();
    const facts = await memory.memories.getFacts({ subject: fact.subject }, reader(tenantA));
    expect(facts.facts.map((f) => `${f.predicate} = ${f.value}`)).toEqual(["top_set.weight_kg = 102.5"]);
    expect(await statusOf(tenantA, fact.id)).toBe("applied");
  });

  it("accepting an edge proposal links the memories; a second accept is shown as a message", async () => {
    const edge = await edgeProposal(tenantA, "accept");
    const browser = await signedIn(tenantA);
    const page = await browser.get(`/ui/proposals/${edge.id}`);
    const answer = await browser.post(`/ui/proposals/${edge.id}/accept`, { csrf_token: csrfOf(page) });
    expect(answer.status).toBe(303);
    const memory = await core.publicMemoryClient();
    const read = await memory.memories.getMemories({ ids: [edge.older] }, reader(tenantA));
    expect(read.memories[0]!.supersededBy).toBe(edge.newer);

    const again = await browser.post(`/ui/proposals/${edge.id}/accept`, { csrf_token: csrfOf(page) });
    expect(again.status).toBe(409);
    expect(again.html).toContain("could not be accepted");
    expect(again.html).not.toContain(`action="/ui/proposals/${edge.id}/accept"`);
  });

  it("rejecting stores the reason and the pair is never proposed again", async () => {
    const edge = await edgeProposal(tenantA, "reject");
    const browser = await signedIn(tenantA);
    const page = await browser.get(`/ui/proposals/${edge.id}`);
    const answer = await browser.post(`/ui/proposals/${edge.id}/reject`, { csrf_token: csrfOf(page), rationale: `different ${HOSTILE}` });
    expect(answer).toMatchObject({ status: 303, location: "/ui/proposals?done=rejected" });
    expect(await statusOf(tenantA, edge.id)).toBe("rejected");
    const decided = await browser.get(`/ui/proposals/${edge.id}`);
    expect(decided.html).toContain("Rejected");
    expect(decided.html).toContain("different &#60;script&#62;");
    expect(decided.html).not.toContain(`action="/ui/proposals/${edge.id}/reject"`);

    const memory = await core.publicMemoryClient();
    const proposedAgain = await memory.proposals.createConsolidationProposals(
      { proposals: [{ fromId: edge.newer, toId: edge.older, edgeType: "supersedes", similarity: 0.95 }] },
      asConsolidator(tenantA),
    );
    expect(proposedAgain.createdIds).toEqual([]);
    expect((await browser.get("/ui/proposals")).html).not.toContain(edge.id);
  });

  it("refuses a decision with a missing or wrong CSRF token and changes nothing", async () => {
    const edge = await edgeProposal(tenantA, "csrf");
    const browser = await signedIn(tenantA);
    const other = await signedIn(tenantA);
    const otherToken = csrfOf(await other.get("/ui/proposals"));
    const attempts: Array<Record<string, string>> = [{}, { csrf_token: "" }, { csrf_token: "forged" }, { csrf_token: otherToken }];
    for (const fields of attempts) {
      const answer = await browser.post(`/ui/proposals/${edge.id}/accept`, fields);
      expect(answer.status).toBe(403);
      expectPageHeaders(answer.headers);
    }
    expect((await browser.post(`/ui/proposals/${edge.id}/reject`, { csrf_token: "forged" })).status).toBe(403);
    expect(await statusOf(tenantA, edge.id)).toBe("proposed");
  });

  it("a read-only key sees no decision buttons and its POST is refused", async () => {
    const edge = await edgeProposal(readOnly, "read-only");
    const browser = await signedIn(readOnly);
    const page = await browser.get(`/ui/proposals/${edge.id}`);
    expect(page.status).toBe(200);
    expect(page.html).not.toContain(`action="/ui/proposals/${edge.id}/accept"`);
    expect(page.html).not.toContain(`action="/ui/proposals/${edge.id}/reject"`);
    const csrf = csrfOf(page); // the sign-out form's, which is the session's
    expect((await browser.post(`/ui/proposals/${edge.id}/accept`, { csrf_token: csrf })).status).toBe(403);
    expect((await browser.post(`/ui/proposals/${edge.id}/reject`, { csrf_token: csrf })).status).toBe(403);
    expect(await statusOf(readOnly, edge.id)).toBe("proposed");
  });

  it("answers another tenant's proposal and memory ids like unknown ones", async () => {
    const edge = await edgeProposal(tenantB, "foreign");
    const browser = await signedIn(tenantA);
    const list = await browser.get("/ui/proposals");
    expect(list.html).not.toContain(edge.id);
    const detail = await browser.get(`/ui/proposals/${edge.id}`);
    expect(detail.status).toBe(404);
    expectPageHeaders(detail.headers);
    const unknownId = "0190c0de-0000-7000-8000-00000000beef";
    const unknown = await browser.get(`/ui/proposals/${unknownId}`);
    expect(unknown.status).toBe(404);
    expect(detail.html.replaceAll(edge.id, "ID")).toBe(unknown.html.replaceAll(unknownId, "ID"));
    expect((await browser.post(`/ui/proposals/${edge.id}/accept`, { csrf_token: csrfOf(list) })).status).toBe(404);
    expect((await browser.get(`/ui/memories/${edge.older}`)).status).toBe(404);
    expect((await browser.get("/ui/proposals/not-a-uuid")).status).toBe(404);
    expect(await statusOf(tenantB, edge.id)).toBe("proposed");
  });
});

describe("rate limits", () => {
  it("count /ui per address before sign-in, and per user after it, refusing with an HTML 429", async () => {
    const limited = await startGateway(
      testConfig(
        { memoryAddr: core.memoryAddress, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk },
        { RATE_LIMIT_IP_PER_MINUTE: "6", RATE_LIMIT_USER_PER_MINUTE: "2" },
      ),
      { log: createLogger({ service: "gateway", level: "silent" }) },
    );
    try {
      const browser = new Browser(limited.url);
      expect((await browser.signIn(tenantA.apiKey)).status).toBe(303); // 2 per-IP points
      expect((await browser.get("/ui/proposals")).status).toBe(200); // IP 3, user 1
      expect((await browser.get("/ui/proposals")).status).toBe(200); // IP 4, user 2
      const byUser = await browser.get("/ui/proposals"); // IP 5, user 3
      expect(byUser.status).toBe(429);
      expect(byUser.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(byUser.headers.get("content-type")).toMatch(/^text\/html/);
      expectPageHeaders(byUser.headers);
      expect(byUser.html).toContain("Too many requests");
      expect((await browser.get("/ui/sign-in")).status).toBe(303); // IP 6: still allowed, already signed in
      const byIp = await new Browser(limited.url).get("/ui/sign-in"); // IP 7
      expect(byIp.status).toBe(429);
      expect(byIp.headers.get("ratelimit-limit")).toBe("6");
    } finally {
      await limited.close();
    }
  });
});

describe("logs", () => {
  it("never carry keys, session tokens or memory content", async () => {
    const browser = await signedIn(tenantA);
    const fact = await factProposal(tenantA, "77");
    const page = await browser.get(`/ui/proposals/${fact.id}`);
    await browser.post(`/ui/proposals/${fact.id}/reject`, { csrf_token: csrfOf(page), rationale: "secret-rationale-words" });
    // A wrong key that shares all but its last two characters with a real one.
    await new Browser(gateway.url).signIn(tenantB.apiKey.slice(0, -2) + (tenantB.apiKey.endsWith("zz") ? "yy" : "zz"));
    const all = logLines.join("\n");
    expect(all).toContain("ui session started");
    expect(all).toContain("proposal decided in the ui");
    for (const secret of [
      tenantA.apiKey,
      tenantB.apiKey.slice(0, -2),
      browser.cookies.get("ui_session")!,
      "Top set 77 kg",
      "secret-rationale-words",
      fact.subject,
    ]) {
      expect(all).not.toContain(secret);
    }
  });
});

describe("browsing", () => {
  it("search, memory, facts and overview pages escape what the services return", async () => {
    const tenant = await core.createTenant("web ui hostile");
    const memory = await core.publicMemoryClient();
    const id = (
      await memory.memories.remember(
        {
          memoryType: "commitment",
          topic: `plan ${HOSTILE}`,
          content: `hostile body ${HOSTILE}`,
          owner: HOSTILE,
          scope: "work",
          project: HOSTILE,
          facts: [{ subject: `s ${HOSTILE}`, predicate: `p ${HOSTILE}`, value: HOSTILE }],
        },
        writer(tenant),
      )
    ).memory!.id;
    const browser = await signedIn(tenant);
    const subject = encodeURIComponent(`s ${HOSTILE}`);
    for (const path of [
      `/ui/search?query=hostile`,
      `/ui/memories/${id}`,
      `/ui/facts`,
      `/ui/facts?subject=${subject}`,
      `/ui/overview`,
      `/ui/search?query=${encodeURIComponent(HOSTILE)}`,
    ]) {
      const page = await browser.get(path);
      expect(page.status, path).toBe(200);
      expectPageHeaders(page.headers);
      expect(page.html, path).not.toContain("<script>");
      expect(page.html, path).toContain("&#60;script&#62;");
    }
  });

  it("says on the overview how far re-embedding with the configured model is, and nothing once it is done", async () => {
    const tenant = await core.createTenant("web ui re-embedding");
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await remember(tenant, `model change ${i}`, `embedded before the model changed ${randomUUID()}`));
    const browser = await signedIn(tenant);
    expect((await browser.get("/ui/overview")).html).not.toContain('id="embedding-progress"');
    // Two of the three carry a model this deployment no longer runs (set behind the services' backs).
    await core.ownerPool.query("UPDATE memories SET embedding_model = 'retired-model' WHERE id = ANY($1::uuid[])", [ids.slice(1)]);
    const during = await browser.get("/ui/overview");
    expect(during.html).toContain("Re-embedding with hashing-512 for meaning search: 1 of 3 memories done.");
    await core.ownerPool.query("UPDATE memories SET embedding_model = 'hashing-512' WHERE id = ANY($1::uuid[])", [ids.slice(1)]);
    expect((await browser.get("/ui/overview")).html).not.toContain('id="embedding-progress"');
  });

  it("counts every proposal waiting on the overview, past the proposals list's page of 100", async () => {
    const tenant = await core.createTenant("web ui many proposals");
    const ids: string[] = [];
    for (let i = 0; i < 15; i++) ids.push(await remember(tenant, `proposal source ${i}`, `memory ${i} for proposals ${randomUUID()}`));
    // 101 of the 105 pairs, each proposed once, the way the consolidator hands them over.
    const pairs = ids.flatMap((fromId, i) => ids.slice(i + 1).map((toId) => ({ fromId, toId, edgeType: "updates" as const, similarity: 0.9 })));
    const memory = await core.publicMemoryClient();
    const created = await memory.proposals.createConsolidationProposals({ proposals: pairs.slice(0, 101) }, asConsolidator(tenant));
    expect(created.createdIds).toHaveLength(101);
    await factProposal(tenant);
    const overview = await (await signedIn(tenant)).get("/ui/overview");
    expect(overview.status).toBe(200);
    expect(overview.html).toContain("102 proposals wait for your review");
  });

  it("ends a cut search excerpt with the one ellipsis the excerpt carries", async () => {
    const tenant = await core.createTenant("web ui long hit");
    await remember(tenant, "long plan", `ellipsis ${"word ".repeat(300)}`);
    const page = await (await signedIn(tenant)).get("/ui/search?query=ellipsis");
    expect(page.status).toBe(200);
    const content = /<p class="content">([^<]*)<\/p>/.exec(page.html)?.[1];
    expect(content).toMatch(/^ellipsis word word .*…$/);
    expect(content).not.toMatch(/…\s*…$/);
  });

  it("marks a past-due commitment Overdue only while its memory is live, not once replaced or archived", async () => {
    const tenant = await core.createTenant("web ui overdue");
    const memory = await core.publicMemoryClient();
    const commitment = (topic: string) =>
      memory.memories.remember({ memoryType: "commitment", topic, content: `${topic} ${randomUUID()}`, dueAt: "2020-01-01T00:00:00.000Z" }, writer(tenant));
    const kept = (await commitment("still due")).memory!.id;
    const archived = (await commitment("archived")).memory!.id;
    const replaced = (await commitment("replaced")).memory!.id;
    await memory.memories.archive({ memoryId: archived }, writer(tenant));
    const successor = (
      await memory.memories.revise(
        { predecessorId: replaced, memoryType: "commitment", topic: "replaced", content: `moved ${randomUUID()}`, dueAt: "2099-01-01T00:00:00.000Z" },
        writer(tenant),
      )
    ).memory!.id;
    const browser = await signedIn(tenant);
    const page = async (id: string) => (await browser.get(`/ui/memories/${id}`)).html;
    expect(await page(kept)).toContain("Overdue");
    expect(await page(archived)).toContain("Archived");
    expect(await page(archived)).not.toContain("Overdue");
    expect(await page(replaced)).toContain("Replaced");
    expect(await page(replaced)).not.toContain("Overdue");
    expect(await page(successor)).not.toContain("Overdue");
  });

  it("shows each revision's words removed and added, hostile text escaped inside them, under the version's anchor", async () => {
    const tenant = await core.createTenant("web ui differences");
    const memory = await core.publicMemoryClient();
    const first = await remember(tenant, "plan", `plan one ${HOSTILE}`);
    const revise = async (predecessorId: string, content: string) =>
      (await memory.memories.revise({ predecessorId, memoryType: "decision", topic: "plan", content }, writer(tenant))).memory!.id;
    const second = await revise(first, `plan two ${HOSTILE} <img src=x onerror=alert(1)>`);
    const third = await revise(second, `plan three ${HOSTILE}`);
    const browser = await signedIn(tenant);
    const page = await browser.get(`/ui/memories/${third}`);
    expect(page.status).toBe(200);
    expectPageHeaders(page.headers);
    expect(page.html).not.toMatch(/<(script|img)\b/);
    const entry = (id: string) => {
      const start = page.html.indexOf(`id="version-${id}"`);
      expect(start, id).toBeGreaterThan(-1);
      return page.html.slice(start, page.html.indexOf("</li>", start));
    };
    expect(entry(first)).toContain("First written as:");
    expect(entry(second)).toContain("<del>one</del><ins>two</ins>");
    expect(entry(second)).toMatch(/<ins>[^<]*&#60;img src&#61;x onerror&#61;alert\(1\)&#62;<\/ins>/);
    expect(entry(third)).toContain("<del>two</del><ins>three</ins>");
    // The Facts page's links land on an older version's page, which shows the same lineage.
    expect((await browser.get(`/ui/memories/${first}`)).html).toContain(`id="version-${third}"`);
  });

  it("answers a search with 5 results unless 10 or 25 are asked for, the rest a page on", async () => {
    const tenant = await core.createTenant("web ui page size");
    for (let i = 0; i < 7; i++) await remember(tenant, `page size ${i}`, `counted decision number ${i}`);
    const browser = await signedIn(tenant);
    const hits = (html: string) => html.match(/<li class="hit">/g)?.length ?? 0;
    const byDefault = await browser.get("/ui/search?query=counted%20decision");
    expect(byDefault.status).toBe(200);
    expect(hits(byDefault.html)).toBe(5);
    expect(byDefault.html).toContain('<option value="5" selected>5</option>');
    // Search's "active" keeps replaced memories, so the status filter does not call it "live".
    expect(byDefault.html).toContain("Not archived (default)");
    expect(byDefault.html).not.toMatch(/Live only|Live \(default\)/);
    // The other two are a page on (the template escapes the link's = and &).
    expect(byDefault.html).toContain('href="/ui/search?query&#61;counted+decision&#38;cursor&#61;');
    const ten = await browser.get("/ui/search?query=counted%20decision&limit=10");
    expect(hits(ten.html)).toBe(7);
    expect(ten.html).toContain('<option value="10" selected>10</option>');
    expect((await browser.get("/ui/search?query=counted%20decision&limit=26")).status).toBe(400);
  });

  it("refuses a bad search filter naming the field, and answers another tenant's memory like an unknown one", async () => {
    const browser = await signedIn(tenantA);
    const bad = await browser.get("/ui/search?query=x&memoryType=poem");
    expect(bad.status).toBe(400);
    expect(bad.html).toContain("(memoryType)");
    const foreign = await remember(tenantB, "foreign memory", `foreign ${randomUUID()}`);
    const unknownId = "0190c0de-0000-7000-8000-00000000beef";
    const page = await browser.get(`/ui/memories/${foreign}`);
    expect(page.status).toBe(404);
    expect(page.html.replaceAll(foreign, "ID")).toBe((await browser.get(`/ui/memories/${unknownId}`)).html.replaceAll(unknownId, "ID"));
    expect((await browser.get("/ui/search?query=foreign%20memory")).html).not.toContain(foreign);
  });
});

describe("keys", () => {
  it("creates a key shown once, lists only the person's own keys, and revokes it", async () => {
    const browser = await signedIn(tenantA);
    const list = await browser.get("/ui/keys");
    expect(list.status).toBe(200);
    expectPageHeaders(list.headers);
    const created = await browser.post("/ui/keys", { csrf_token: csrfOf(list), name: `mine ${HOSTILE}`, access: "read_write" });
    expect(created.status).toBe(201);
    expectPageHeaders(created.headers);
    const key = /<p class="key" id="new-key-value">([^<]+)<\/p>/.exec(created.html)?.[1];
    expect(key).toMatch(/^3ng_/);
    expect(created.html).toContain("mine &#60;script&#62;");
    const memory = await core.publicMemoryClient();
    const resolved = await memory.apiKeys.resolveApiKey({ apiKey: key! }, { identity: { scopes: [SCOPES.internalAuth] } });
    expect(resolved).toMatchObject({ tenantId: tenantA.tenantId, userId: tenantA.userId, scopes: [SCOPES.read, SCOPES.write] });
    const again = await browser.get("/ui/keys");
    expect(again.html).not.toContain(key!);
    expect(again.html).toContain(`action="/ui/keys/${resolved.keyId}/revoke"`);
    // Another tenant's list never shows it, and cannot revoke it.
    const other = await signedIn(tenantB);
    const otherList = await other.get("/ui/keys");
    expect(otherList.html).not.toContain(resolved.keyId);
    expect((await other.post(`/ui/keys/${resolved.keyId}/revoke`, { csrf_token: csrfOf(otherList) })).status).toBe(404);
    expect((await memory.apiKeys.resolveApiKey({ apiKey: key! }, { identity: { scopes: [SCOPES.internalAuth] } })).keyId).toBe(resolved.keyId);

    const revoked = await browser.post(`/ui/keys/${resolved.keyId}/revoke`, { csrf_token: csrfOf(again) });
    expect(revoked).toMatchObject({ status: 303, location: "/ui/keys?done=revoked" });
    const err = await memory.apiKeys.resolveApiKey({ apiKey: key! }, { identity: { scopes: [SCOPES.internalAuth] } }).catch((e: unknown) => e);
    expect((err as { reason?: string }).reason).toBe("unauthenticated");
    expect(logLines.join("\n")).not.toContain(key!);
  });

  it("refuses to start a session with a key revoked a moment ago, although the gateway still has it cached", async () => {
    const browser = await signedIn(tenantA);
    const list = await browser.get("/ui/keys");
    const created = await browser.post("/ui/keys", { csrf_token: csrfOf(list), name: "soon revoked", access: "read_write" });
    const key = /<p class="key" id="new-key-value">([^<]+)<\/p>/.exec(created.html)![1]!;
    // A call with the key puts its resolution in the gateway's cache (kept 30 s).
    expect((await fetch(`${gateway.url}/api/v1/memories`, { headers: { Authorization: `Bearer ${key}` } })).status).toBe(200);
    const memory = await core.publicMemoryClient();
    const { keyId } = await memory.apiKeys.resolveApiKey({ apiKey: key }, { identity: { scopes: [SCOPES.internalAuth] } });
    const keys = await browser.get("/ui/keys");
    expect((await browser.post(`/ui/keys/${keyId}/revoke`, { csrf_token: csrfOf(keys) })).status).toBe(303);
    const answer = await new Browser(gateway.url).signIn(key);
    expect(answer.status).toBe(401);
  });

  it("a read-only session sees no read-write choice and a forged one is refused; a form without its CSRF token changes nothing", async () => {
    const browser = await signedIn(readOnly);
    const list = await browser.get("/ui/keys");
    expect(list.html).not.toContain('value="read_write"');
    const forged = await browser.post("/ui/keys", { csrf_token: csrfOf(list), name: "escalate", access: "read_write" });
    expect(forged.status).toBe(403);
    const memory = await core.publicMemoryClient();
    const names = async () => (await memory.apiKeys.listMyApiKeys({}, reader(readOnly))).keys.map((k) => k.name);
    expect(await names()).not.toContain("escalate");
    expect((await browser.post("/ui/keys", { name: "no csrf", access: "read" })).status).toBe(403);
    expect((await browser.post("/ui/keys", { csrf_token: csrfOf(list), name: "", access: "read" })).status).toBe(400);
    expect(await names()).not.toContain("no csrf");
    const ok = await browser.post("/ui/keys", { csrf_token: csrfOf(list), name: "reader's own", access: "read" });
    expect(ok.status).toBe(201);
    expect(await names()).toContain("reader's own");
  });
});
