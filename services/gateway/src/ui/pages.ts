/**
 * The review UI's HTML, one function per page. Plain server-rendered documents: no script, no
 * inline style (one stylesheet from /ui/style.css), every value from the services escaped.
 */
import type { EdgeProposalRecord, FactProposalRecord, MemoryRecord, ProposalStatus } from "@3ngram/schema";
import { escapeHtml as e } from "../http/html-page.js";

/** What the header needs to show the signed-in state and the sign-out button. */
export interface SignedIn {
  csrfToken: string;
  canWrite: boolean;
}

/** A line shown at the top of a page: a notice after success, or a problem. */
export interface Flash {
  kind: "notice" | "problem";
  text: string;
}

function layout(title: string, body: string, signedIn?: SignedIn): string {
  const header = signedIn
    ? `<header>
      <nav aria-label="Main"><ul><li><a href="/ui/proposals">Proposals</a></li></ul></nav>
      <form method="post" action="/ui/sign-out"><input type="hidden" name="csrf_token" value="${e(signedIn.csrfToken)}"><button type="submit">Sign out</button></form>
    </header>`
    : "";
  return `<!doctype html>
<html lang="en">
  <head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${e(title)} · 3ngram</title><link rel="stylesheet" href="/ui/style.css"></head>
  <body>
    ${header}
    <main>
${body}
    </main>
  </body>
</html>
`;
}

function flashHtml(flash: Flash | undefined): string {
  if (flash === undefined) return "";
  const role = flash.kind === "problem" ? "alert" : "status";
  return `<p class="${flash.kind}" role="${role}">${e(flash.text)}</p>`;
}

export function renderSignInPage(view: { csrfToken: string; flash?: Flash }): string {
  return layout(
    "Sign in",
    `<h1>Review proposals</h1>
      <p>Background work only proposes links between memories and facts read from them; nothing becomes true until you accept it here.</p>
      ${flashHtml(view.flash)}
      <form method="post" action="/ui/sign-in">
        <input type="hidden" name="csrf_token" value="${e(view.csrfToken)}">
        <p><label for="api_key">Paste one of your 3ngram API keys</label><br>
        <input id="api_key" name="api_key" type="password" autocomplete="off" required size="60"></p>
        <p>The key is checked once and is not stored in your browser; the session lasts at most 8 hours.</p>
        <button type="submit">Sign in</button>
      </form>`,
  );
}

export function renderMessagePage(title: string, text: string, signedIn?: SignedIn): string {
  return layout(title, `<h1>${e(title)}</h1>\n      <p>${e(text)}</p>\n      <p><a href="/ui/proposals">Back to the proposals</a></p>`, signedIn);
}

export interface ProposalListView {
  status: ProposalStatus;
  limit: number;
  /** The limit a "show more" link asks for, when more may exist. */
  moreLimit?: number;
  edges: EdgeProposalRecord[];
  facts: FactProposalRecord[];
  flash?: Flash;
}

const STATUSES: readonly ProposalStatus[] = ["proposed", "applied", "rejected"];
const STATUS_TEXT: Record<ProposalStatus, string> = { proposed: "Pending", applied: "Accepted", rejected: "Rejected" };

function detailLink(id: string, text: string): string {
  return `<a href="/ui/proposals/${e(id)}">${e(text)}</a>`;
}

function edgeRow(p: EdgeProposalRecord): string {
  return `<tr><td>${detailLink(p.id, p.fromTopic)}</td><td>${e(p.edgeType)}</td><td>${e(p.toTopic)}</td><td>${p.similarity.toFixed(3)}</td><td>${e(p.createdAt)}</td></tr>`;
}

function factRow(p: FactProposalRecord): string {
  return `<tr><td>${detailLink(p.id, p.subject)}</td><td>${e(p.predicate)}</td><td>${e(p.value)}</td><td>${e(p.extractor)}</td><td>${e(p.createdAt)}</td></tr>`;
}

export function renderProposalListPage(view: ProposalListView, signedIn: SignedIn): string {
  const tabs = STATUSES.map((s) =>
    s === view.status ? `<li><strong aria-current="page">${STATUS_TEXT[s]}</strong></li>` : `<li><a href="/ui/proposals?status=${s}">${STATUS_TEXT[s]}</a></li>`,
  ).join("");
  const edges =
    view.edges.length === 0
      ? "<p>None.</p>"
      : `<table><thead><tr><th scope="col">Newer memory</th><th scope="col">Link</th><th scope="col">Older memory</th><th scope="col">Similarity</th><th scope="col">Proposed</th></tr></thead>
        <tbody>${view.edges.map(edgeRow).join("")}</tbody></table>`;
  const facts =
    view.facts.length === 0
      ? "<p>None.</p>"
      : `<table><thead><tr><th scope="col">Subject</th><th scope="col">Predicate</th><th scope="col">Value</th><th scope="col">Extractor</th><th scope="col">Proposed</th></tr></thead>
        <tbody>${view.facts.map(factRow).join("")}</tbody></table>`;
  const more = view.moreLimit === undefined ? "" : `<p><a href="/ui/proposals?status=${view.status}&amp;limit=${view.moreLimit}">Show more</a></p>`;
  return layout(
    `${STATUS_TEXT[view.status]} proposals`,
    `<h1>${STATUS_TEXT[view.status]} proposals</h1>
      ${flashHtml(view.flash)}
      <nav aria-label="Status"><ul>${tabs}</ul></nav>
      <p>Newest first, at most ${view.limit} of each kind. Open one to compare and decide.</p>
      <h2>Links between memories (${view.edges.length})</h2>
      ${edges}
      <h2>Extracted facts (${view.facts.length})</h2>
      ${facts}
      ${more}`,
    signedIn,
  );
}

export type ProposalDetailView =
  | { kind: "edge"; proposal: EdgeProposalRecord; newer?: MemoryRecord; older?: MemoryRecord; flash?: Flash }
  | { kind: "fact"; proposal: FactProposalRecord; memory?: MemoryRecord; flash?: Flash };

const EDGE_TEXT: Record<EdgeProposalRecord["edgeType"], string> = {
  extends: "adds to",
  updates: "updates",
  supersedes: "replaces",
};

function memoryCard(heading: string, memory: MemoryRecord | undefined, id: string): string {
  if (memory === undefined) return `<section class="card"><h2>${e(heading)}</h2><p>Memory <code>${e(id)}</code> is no longer readable.</p></section>`;
  return `<section class="card">
        <h2>${e(heading)}: ${e(memory.topic)}</h2>
        <p class="content">${e(memory.content)}${memory.truncated ? " …" : ""}</p>
        <dl><dt>Type</dt><dd>${e(memory.memoryType)}</dd><dt>Scope</dt><dd>${e(memory.scope)}</dd><dt>Status</dt><dd>${e(memory.status)}</dd><dt>Recorded</dt><dd>${e(memory.recordedAt)}</dd></dl>
        <p><a href="/ui/memories/${e(memory.id)}">Open this memory</a></p>
      </section>`;
}

function decisionHtml(p: { status: ProposalStatus; decidedAt: string | null; decisionRationale: string | null }): string {
  if (p.status === "proposed") return "";
  const why = p.decisionRationale === null ? "" : ` Reason given: <q>${e(p.decisionRationale)}</q>`;
  return `<p>${p.status === "applied" ? "Accepted" : "Rejected"} ${e(p.decidedAt ?? "")}.${why}</p>`;
}

function decideForms(id: string, signedIn: SignedIn): string {
  if (!signedIn.canWrite) return "<p>Your key can read but not write, so it cannot decide proposals.</p>";
  const csrf = `<input type="hidden" name="csrf_token" value="${e(signedIn.csrfToken)}">`;
  return `<h2>Decide</h2>
      <div class="decide">
        <form method="post" action="/ui/proposals/${e(id)}/accept">${csrf}<button type="submit">Accept</button></form>
        <form method="post" action="/ui/proposals/${e(id)}/reject">${csrf}
          <p><label for="rationale">Why reject it? (optional)</label><br><textarea id="rationale" name="rationale" maxlength="2000"></textarea></p>
          <button type="submit">Reject</button>
        </form>
      </div>`;
}

export function renderProposalPage(view: ProposalDetailView, signedIn: SignedIn): string {
  const p = view.proposal;
  const rationale = p.rationale === null ? "" : `<p>Why it was proposed: ${e(p.rationale)}</p>`;
  const decide = p.status === "proposed" ? decideForms(p.id, signedIn) : decisionHtml(p);
  if (view.kind === "edge") {
    const edge = view.proposal;
    return layout(
      "Link proposal",
      `<h1>Proposed: the newer memory ${EDGE_TEXT[edge.edgeType]} the older one</h1>
      ${flashHtml(view.flash)}
      <p>Link <code>${e(edge.edgeType)}</code>, similarity ${edge.similarity.toFixed(3)}, status ${e(edge.status)}.</p>
      ${rationale}
      <div class="pair">
        ${memoryCard("Newer", view.newer, edge.fromId)}
        ${memoryCard("Older", view.older, edge.toId)}
      </div>
      ${decide}`,
      signedIn,
    );
  }
  const fact = view.proposal;
  const confidence = fact.confidence === null ? "not given" : fact.confidence.toFixed(2);
  return layout(
    "Fact proposal",
    `<h1>Proposed fact about ${e(fact.subject)}</h1>
      ${flashHtml(view.flash)}
      <div class="pair">
        <section class="card">
          <h2>The fact</h2>
          <dl><dt>Subject</dt><dd>${e(fact.subject)}</dd><dt>Predicate</dt><dd>${e(fact.predicate)}</dd><dt>Value</dt><dd>${e(fact.value)}</dd><dt>Confidence</dt><dd>${confidence}</dd><dt>Extractor</dt><dd>${e(fact.extractor)}</dd><dt>Status</dt><dd>${e(fact.status)}</dd></dl>
          ${rationale}
        </section>
        ${memoryCard("Read from", view.memory, fact.memoryId)}
      </div>
      ${decide}`,
    signedIn,
  );
}

export function renderMemoryPage(memory: MemoryRecord, signedIn: SignedIn): string {
  const tags = memory.tags.length === 0 ? "none" : memory.tags.map(e).join(", ");
  const successor = memory.supersededBy === null ? "" : `<dt>Replaced by</dt><dd><a href="/ui/memories/${e(memory.supersededBy)}">${e(memory.supersededBy)}</a></dd>`;
  return layout(
    "Memory",
    `<h1>${e(memory.topic)}</h1>
      <p class="content">${e(memory.content)}${memory.truncated ? " …" : ""}</p>
      <dl>
        <dt>Id</dt><dd><code>${e(memory.id)}</code></dd>
        <dt>Type</dt><dd>${e(memory.memoryType)}</dd>
        <dt>Scope</dt><dd>${e(memory.scope)}</dd>
        <dt>Project</dt><dd>${e(memory.project ?? "none")}</dd>
        <dt>Tags</dt><dd>${tags}</dd>
        <dt>Status</dt><dd>${e(memory.status)}</dd>
        <dt>Valid from</dt><dd>${e(memory.validFrom)}</dd>
        <dt>Valid to</dt><dd>${e(memory.validTo ?? "still valid")}</dd>
        <dt>Recorded</dt><dd>${e(memory.recordedAt)}</dd>
        ${successor}
      </dl>
      <p>Read-only: memories are never edited in place.</p>`,
    signedIn,
  );
}
