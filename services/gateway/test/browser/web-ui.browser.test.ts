/// <reference lib="dom" />
/**
 * The web UI in a real browser: Debian's chromium driven by puppeteer-core against a real gateway
 * in front of the real memory and search services on PostgreSQL. It does what a person does —
 * signs in, reads the overview, searches (from the header of any page too), opens a memory, follows
 * its lineage and reads what each revision changed, reads a fact's chart, accepts a proposal,
 * creates and revokes a key — and asserts on the DOM after each step.
 * Screenshots land in test-results/screenshots/ (git-ignored) as artefacts of the run.
 */
import { SCOPES, type CallOptions } from "@3ngram/rpc";
import { createLogger } from "@3ngram/runtime";
import type { Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, type RealBrowser } from "../../../../test/support/chromium.js";
import { reader, rejection, writer } from "../../../../test/support/calls.js";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { startGateway, type RunningGateway } from "../../src/gateway.js";
import { testConfig } from "../support/gateway.js";

const DAY_MS = 86_400_000;
const internalAuth = { identity: { scopes: [SCOPES.internalAuth] } };

let core: CoreServices;
let gateway: RunningGateway;
let chromium: RealBrowser;
let page: Page;
let tenant: { tenantId: string; userId: string; apiKey: string };
const ids = {} as Record<string, string>;
const shots: string[] = [];

const asConsolidator = (): CallOptions => ({ identity: { tenantId: tenant.tenantId, scopes: [SCOPES.internalConsolidate] } });
const daysAgo = (n: number) => new Date(Date.now() - n * DAY_MS).toISOString();

async function seed(): Promise<void> {
  const memory = await core.publicMemoryClient();
  // Written the way an agent writes them, so the history names who did what.
  const w: CallOptions = { identity: { ...writer(tenant).identity, actor: "user_mcp" } };
  const remember = async (fields: Parameters<typeof memory.memories.remember>[0]) => (await memory.memories.remember(fields, w)).memory!.id;
  // A decision corrected twice: three versions in one lineage.
  ids.v1 = await remember({ memoryType: "decision", topic: "Release date for atlas", content: "We ship atlas on 3 March.", scope: "work", project: "atlas" });
  ids.v2 = (
    await memory.memories.revise(
      {
        predecessorId: ids.v1,
        memoryType: "decision",
        topic: "Release date for atlas",
        content: "We ship atlas on 10 March after the audit.",
        scope: "work",
        project: "atlas",
      },
      w,
    )
  ).memory!.id;
  ids.v3 = (
    await memory.memories.revise(
      {
        predecessorId: ids.v2,
        memoryType: "decision",
        topic: "Release date for atlas",
        content: "We ship atlas on 17 March; the audit slipped a week.",
        scope: "work",
        project: "atlas",
      },
      w,
    )
  ).memory!.id;
  ids.overdue = await remember({
    memoryType: "commitment",
    topic: "Send the board update",
    content: "Send the quarterly board update to Ana.",
    dueAt: daysAgo(2),
    owner: "sam",
    scope: "work",
    project: "atlas",
  });
  ids.done = await remember({
    memoryType: "commitment",
    topic: "Book the venue",
    content: "Book the venue for the offsite.",
    dueAt: daysAgo(-5),
    scope: "work",
  });
  await memory.memories.resolve({ memoryId: ids.done, status: "resolved" }, w);
  ids.blocker = await remember({
    memoryType: "blocker",
    topic: "Waiting on the security audit",
    content: "The security audit has not started.",
    scope: "work",
    project: "atlas",
  });
  ids.preference = await remember({
    memoryType: "preference",
    topic: "Short status updates",
    content: "Ana prefers status updates under five lines.",
    scope: "work",
  });
  // A measured fact, three generations: 80 → 85 → 90 kg.
  for (const [value, days] of [
    ["80", 60],
    ["85", 30],
    ["90", 10],
  ] as const) {
    ids[`lift${value}`] = await remember({
      memoryType: "fact",
      topic: "Back squat top set",
      content: `Back squat top set ${value} kg.`,
      scope: "health",
      facts: [{ subject: "lifter:ana", predicate: "top_set.weight_kg", value, validFrom: daysAgo(days) }],
    });
  }
  // A link proposal between two notes, as the consolidator hands it over.
  ids.noteOld = await remember({ memoryType: "note", topic: "Standup time", content: "Standup is at 9:30 every weekday." });
  ids.noteNew = await remember({ memoryType: "note", topic: "Standup moved", content: "Standup moved to 9:45 every weekday." });
  const proposal = await memory.proposals.createConsolidationProposals(
    {
      proposals: [
        {
          fromId: ids.noteNew,
          toId: ids.noteOld,
          edgeType: "supersedes",
          similarity: 0.954,
          rationale: "cosine 0.954 >= near-duplicate threshold 0.92; note -> note: supersedes",
        },
      ],
    },
    asConsolidator(),
  );
  ids.proposal = proposal.createdIds[0]!;
}

beforeAll(async () => {
  core = await startCoreServices({ label: "gateway-browser" });
  tenant = await core.createTenant("browser test");
  gateway = await startGateway(testConfig({ memoryAddr: core.memoryAddress, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk }), {
    log: createLogger({ service: "gateway", level: "silent" }),
  });
  await seed();
  chromium = await launchChromium();
  page = chromium.page;
  // Seeding plus up to two chromium starts (test/support/chromium.ts) on a loaded machine.
}, 360_000);

afterAll(async () => {
  await chromium?.close();
  await gateway?.close();
  await core?.close();
});

async function goto(path: string): Promise<void> {
  await page.goto(`${gateway.url}${path}`, { waitUntil: "load" });
}

/** Clicks and waits for the navigation it starts. */
async function clickAndWait(selector: string): Promise<void> {
  await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click(selector)]);
}

const text = (selector: string) => page.$eval(selector, (el) => (el as HTMLElement).innerText);
const texts = (selector: string) => page.$$eval(selector, (els) => els.map((el) => (el as HTMLElement).innerText));

async function shot(name: string): Promise<void> {
  shots.push(await chromium.screenshot(name));
}

describe("the web UI in chromium", () => {
  it("signs in with an API key and lands on the overview", async () => {
    await goto("/ui/");
    expect(new URL(page.url()).pathname).toBe("/ui/sign-in");
    await page.type("#api_key", tenant.apiKey);
    await clickAndWait("form[action='/ui/sign-in'] button[type=submit]");
    expect(new URL(page.url()).pathname).toBe("/ui/overview");
    expect(await text("h1")).toBe("Overview");
    // The session cookie is HttpOnly: the page itself cannot read it.
    expect(await page.evaluate(() => document.cookie)).not.toContain("ui_session");
  });

  it("shows the dashboard: overdue and open commitments, blockers, recent decisions, waiting proposals", async () => {
    expect(await texts("#overdue ~ ul li a")).toEqual(["Send the board update"]);
    const overdue = await text("section[aria-labelledby=overdue]");
    expect(overdue).toContain("Overdue");
    expect(overdue).toMatch(/due 2 days ago/);
    expect(overdue).toContain("owner sam");
    expect(await texts("section[aria-labelledby=blockers] li a")).toEqual(["Waiting on the security audit"]);
    // Only the live head of the corrected decision counts as a recent decision.
    expect(await texts("section[aria-labelledby=decisions] li a")).toEqual(["Release date for atlas"]);
    expect(await page.$eval("section[aria-labelledby=decisions] li a", (a) => a.getAttribute("href"))).toBe(`/ui/memories/${ids.v3}`);
    expect(await text("p.flash.notice")).toContain("1 proposal waits for your review");
    // The full time is on hover; the page shows it relative to now.
    expect(await page.$eval("section[aria-labelledby=overdue] time", (t) => t.getAttribute("title"))).toMatch(/ UTC$/);
    await shot("overview");

    // Narrowed to one project: the preference (no project) drops out, the blocker stays.
    await page.select("#kind", "project");
    await page.select("#project", "atlas");
    await clickAndWait("form[action='/ui/overview'] button[type=submit]");
    expect(await texts("section[aria-labelledby=preferences] li a")).toEqual([]);
    expect(await texts("section[aria-labelledby=blockers] li a")).toEqual(["Waiting on the security audit"]);
  });

  it("searches from the header of any page, 5 results unless more are asked for", async () => {
    for (const from of ["/ui/overview", "/ui/facts", "/ui/keys", `/ui/memories/${ids.v1}`]) {
      await goto(from);
      await page.type("header search #find-query", "atlas");
      await clickAndWait("header search button[type=submit]");
      const url = new URL(page.url());
      expect(url.pathname, from).toBe("/ui/search");
      expect(url.searchParams.get("query"), from).toBe("atlas");
      // The Search page takes it from there: the query in its own form, 5 per page by default.
      expect(await page.$eval("#query", (input) => (input as HTMLInputElement).value), from).toBe("atlas");
      expect(await page.$eval("#limit", (select) => (select as HTMLSelectElement).value), from).toBe("5");
      const hits = await page.$$eval("li.hit h3 a", (as) => as.map((a) => a.getAttribute("href")));
      expect(hits.length, from).toBeGreaterThan(0);
      expect(hits.length, from).toBeLessThanOrEqual(5);
    }
    await shot("header-search");
  });

  it("searches: hits with excerpts, best first, and says plainly when nothing is stored", async () => {
    await goto("/ui/search");
    await page.type("#query", "when do we ship atlas release date");
    await clickAndWait("form[role=search] button[type=submit]");
    const hits = await page.$$eval("li.hit h3 a", (as) => as.map((a) => a.getAttribute("href")));
    expect(hits[0]).toBe(`/ui/memories/${ids.v3}`);
    // The replaced versions stay findable, but never above the current one.
    for (const old of [ids.v1, ids.v2]) expect(hits.indexOf(`/ui/memories/${old}`)).not.toBe(0);
    expect(await text("li.hit .content")).toContain("17 March");
    expect(await text("[role=status] .verdict")).toMatch(/^Found \d+ memor/);
    await shot("search");

    await page.$eval("#query", (input) => ((input as HTMLInputElement).value = ""));
    await page.type("#query", "zebra quaternion xylophone");
    await clickAndWait("form[role=search] button[type=submit]");
    expect(await text("[role=status] .verdict")).toBe("Nothing stored about this.");
    // The nearest memories are still there for the curious, folded away.
    expect(await page.$eval("details.closest", (d) => (d as HTMLDetailsElement).open)).toBe(false);
  });

  it("lists newest first by filter alone and pages on with the cursor", async () => {
    await goto("/ui/search?order=chronological&memoryType=fact&limit=5");
    expect(await page.$$eval("li.hit", (li) => li.length)).toBe(3);
    await goto("/ui/search?order=chronological&scope=work&limit=5");
    const first = await page.$$eval("li.hit h3 a", (as) => as.map((a) => a.getAttribute("href")));
    expect(first).toHaveLength(5);
    await clickAndWait("a.button[href*='cursor=']");
    const second = await page.$$eval("li.hit h3 a", (as) => as.map((a) => a.getAttribute("href")));
    expect(second.length).toBeGreaterThan(0);
    expect(second.filter((href) => first.includes(href))).toEqual([]);
  });

  it("opens a memory and follows its lineage back to the version it replaced", async () => {
    await goto(`/ui/search?query=${encodeURIComponent("release date atlas")}`);
    await clickAndWait(`li.hit h3 a[href='/ui/memories/${ids.v3}']`);
    expect(await text("h1")).toBe("Release date for atlas");
    expect(await text(".card .content")).toContain("17 March");
    const versions = await texts("ol.timeline li:not(.event)");
    expect(versions).toHaveLength(3);
    expect(versions[0]).toMatch(/^Version 1/);
    expect(versions[0]).toContain("Later replaced by");
    expect(versions[2]).toContain("this page");
    expect(await texts("ol.timeline li.current")).toHaveLength(1);
    expect(await text("ol.timeline")).toContain("by an agent (MCP)");
    await shot("memory-lineage");

    await clickAndWait(`ol.timeline a[href='/ui/memories/${ids.v1}']`);
    expect(await text(".card .content")).toContain("3 March");
    expect(await text("p[role=note]")).toContain("A later memory replaced this one");
    await clickAndWait("p[role=note] a");
    expect(new URL(page.url()).pathname).toBe(`/ui/memories/${ids.v2}`);
  });

  it("shows what each revision changed: words removed struck through, words added underlined, under the version's anchor", async () => {
    await goto(`/ui/memories/${ids.v3}`);
    // The first version is shown whole; each of the two revisions as its difference from the one before.
    expect(await text(`#version-${ids.v1} .change`)).toContain("First written as:");
    expect(await page.$$eval(`#version-${ids.v1} del, #version-${ids.v1} ins`, (els) => els.length)).toBe(0);
    expect(await text(`#version-${ids.v2} .change`)).toContain("Changed from version 1:");
    const marked = async (selector: string) => (await texts(selector)).map((t) => t.trim());
    expect(await marked(`#version-${ids.v2} .diff del`)).toEqual(["3"]);
    expect(await marked(`#version-${ids.v2} .diff ins`)).toEqual(["10", "after the audit"]);
    expect(await text(`#version-${ids.v3} .change`)).toContain("Changed from version 2:");
    expect(await marked(`#version-${ids.v3} .diff del`)).toEqual(["10", "after"]);
    expect(await marked(`#version-${ids.v3} .diff ins`)).toEqual(["17", ";", "slipped a week"]);
    expect(await text(`#version-${ids.v3} .diff`)).toBe("We ship atlas on 1017 March after; the audit slipped a week.");
    // Not colour alone: the stylesheet strikes removed words through and underlines added ones.
    const decoration = (selector: string) => page.$eval(selector, (el) => getComputedStyle(el).textDecorationLine);
    expect(await decoration(`#version-${ids.v3} .diff del`)).toBe("line-through");
    expect(await decoration(`#version-${ids.v3} .diff ins`)).toBe("underline");
    await shot("memory-differences");
  });

  it("shows a commitment's due date, status and who resolved it", async () => {
    await goto(`/ui/memories/${ids.done}`);
    expect(await text("section[aria-labelledby=commitment-heading]")).toContain("Done");
    expect(await text("ol.timeline")).toMatch(/Marked done \(Open → Done\) by an agent \(MCP\)/);
    await goto(`/ui/memories/${ids.overdue}`);
    const box = await text("section[aria-labelledby=commitment-heading]");
    expect(box).toContain("Overdue");
    expect(box).toContain("sam");
  });

  it("draws a fact's history as a chart: one point per value, replaced ones hollow, each linked to what its version changed", async () => {
    await goto("/ui/facts");
    await clickAndWait("a[href='/ui/facts?subject=lifter%3Aana']");
    expect(await text("h1")).toBe("Facts about lifter:ana");
    expect(await page.$$eval("figure.chart circle.point", (c) => c.length)).toBe(3);
    expect(await page.$$eval("figure.chart circle.point.superseded", (c) => c.length)).toBe(2);
    expect(await page.$$eval("figure.chart circle.point", (c) => c.map((p) => p.getAttribute("data-value")))).toEqual(["80", "85", "90"]);
    const links = await page.$$eval("figure.chart a", (as) => as.map((a) => a.getAttribute("href")));
    const atChange = (id: string) => `/ui/memories/${id}#version-${id}`;
    expect(links).toEqual([atChange(ids.lift80!), atChange(ids.lift85!), atChange(ids.lift90!)]);
    // The table's rows link to the same places.
    expect(await page.$$eval(".series tbody tr td:last-child a", (as) => as.map((a) => a.getAttribute("href")))).toEqual(links);
    // Points rise left to right as the values do.
    const ys = await page.$$eval("figure.chart circle.point", (c) => c.map((p) => Number(p.getAttribute("cy"))));
    expect(ys[0]).toBeGreaterThan(ys[1]!);
    expect(ys[1]).toBeGreaterThan(ys[2]!);
    expect(await texts(".series tbody tr td:first-child")).toEqual(["80 replaced", "85 replaced", "90 current"]);
    await shot("fact-chart");
    await clickAndWait("figure.chart a:last-of-type");
    expect(new URL(page.url()).pathname).toBe(`/ui/memories/${ids.lift90}`);
    // It opens at that version's entry on the timeline, the one :target marks.
    expect(new URL(page.url()).hash).toBe(`#version-${ids.lift90}`);
    expect(await page.$eval(":target", (el) => el.id)).toBe(`version-${ids.lift90}`);
    expect(await text(":target .change")).toContain("Back squat top set 90 kg.");
  });

  it("accepts a proposal after comparing the two memories", async () => {
    await goto("/ui/proposals");
    await clickAndWait(`a[href='/ui/proposals/${ids.proposal}']`);
    expect(await texts(".pair .card h2")).toEqual(["Newer: Standup moved", "Older: Standup time"]);
    // Plain words first; the internal rationale only behind "Technical detail".
    expect(await text("main")).toContain("95% alike in meaning");
    expect(await page.$eval("details", (d) => (d as HTMLDetailsElement).open)).toBe(false);
    await shot("proposal");
    await clickAndWait(`form[action='/ui/proposals/${ids.proposal}/accept'] button`);
    expect(await text("p.flash")).toBe("Proposal accepted.");
    const memory = await core.publicMemoryClient();
    expect((await memory.memories.getMemories({ ids: [ids.noteOld!] }, reader(tenant))).memories[0]!.supersededBy).toBe(ids.noteNew);
  });

  it("creates a read-only key, shows it once, and revokes it", async () => {
    await goto("/ui/keys");
    await page.type("#name", "browser reader");
    await page.click("input[name=access][value=read]");
    await clickAndWait("form[action='/ui/keys'] button[type=submit]");
    const issued = await text("#new-key-value");
    expect(issued).toMatch(/^3ng_[A-Za-z0-9_-]{8}_[A-Za-z0-9_-]{43}$/);
    const memory = await core.publicMemoryClient();
    const resolved = await memory.apiKeys.resolveApiKey({ apiKey: issued }, internalAuth);
    expect(resolved.scopes).toEqual([SCOPES.read]);
    expect(await text("tbody tr:first-child")).toContain("browser reader");
    expect(await text("tbody tr:first-child")).toContain("Read only");
    await shot("keys-new");

    // Shown once: reloading the list never shows it again.
    await goto("/ui/keys");
    expect(await page.$("#new-key-value")).toBeNull();
    expect(await page.content()).not.toContain(issued);
    await clickAndWait(`form[action='/ui/keys/${resolved.keyId}/revoke'] button`);
    expect(await text("p.flash")).toContain("Key revoked");
    expect(await text("tbody tr:first-child")).toContain("Revoked");
    expect((await rejection(memory.apiKeys.resolveApiKey({ apiKey: issued }, internalAuth))).reason).toBe("unauthenticated");
  });

  it("is usable from the keyboard: the first Tab reaches the skip link, and the form submits with Enter", async () => {
    await goto("/ui/search");
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
    await page.focus("#query");
    await page.keyboard.type("standup");
    await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.keyboard.press("Enter")]);
    expect(await page.$$eval("li.hit", (li) => li.length)).toBeGreaterThan(0);
  });

  it("fits a phone screen without sideways scrolling", async () => {
    await page.setViewport({ width: 390, height: 844, isMobile: true });
    for (const path of ["/ui/overview", "/ui/search?query=atlas", `/ui/memories/${ids.v3}`, "/ui/facts?subject=lifter%3Aana", "/ui/keys"]) {
      await goto(path);
      expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth), path).toBeLessThanOrEqual(0);
    }
    await shot("phone-facts");
    await page.setViewport({ width: 1280, height: 900 });
  });

  it("ran under the strict CSP without a single refusal or script error, and kept its screenshots", () => {
    expect(chromium.consoleErrors).toEqual([]);
    expect(shots.map((p) => p.split("/").pop())).toEqual([
      "overview.png",
      "header-search.png",
      "search.png",
      "memory-lineage.png",
      "memory-differences.png",
      "fact-chart.png",
      "proposal.png",
      "keys-new.png",
      "phone-facts.png",
    ]);
  });
});
