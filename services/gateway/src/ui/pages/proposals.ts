/** The review queue: proposals of both kinds, and one proposal beside the memories it touches. */
import type { EdgeProposalRecord, FactProposalRecord, MemoryRecord, ProposalStatus } from "@3ngram/schema";
import { EDGE_TEXT, confidenceText, edgeReason, factReason, percent, when } from "../format.js";
import { html, type Html } from "../../http/html.js";
import { csrfField, flashHtml, layout, type Flash, type SignedIn } from "../layout.js";
import { memoryCard } from "./parts.js";

export interface ProposalListView {
  status: ProposalStatus;
  limit: number;
  /** The limit a "show more" link asks for, when more may exist. */
  moreLimit?: number;
  edges: EdgeProposalRecord[];
  facts: FactProposalRecord[];
  flash?: Flash;
  now: number;
}

const STATUSES: readonly ProposalStatus[] = ["proposed", "applied", "rejected"];
const STATUS_TEXT: Record<ProposalStatus, string> = { proposed: "Pending", applied: "Accepted", rejected: "Rejected" };

function detailLink(id: string, text: string): Html {
  return html`<a href="/ui/proposals/${id}">${text}</a>`;
}

function edgeRow(p: EdgeProposalRecord, now: number): Html {
  return html`<tr><td>${detailLink(p.id, p.fromTopic)}</td><td>${EDGE_TEXT[p.edgeType]}</td><td>${p.toTopic}</td><td>${percent(p.similarity)} alike</td><td>${when(p.createdAt, now)}</td></tr>`;
}

function factRow(p: FactProposalRecord, now: number): Html {
  return html`<tr><td>${detailLink(p.id, p.subject)}</td><td>${p.predicate}</td><td>${p.value}</td><td>${factReason(p.rationale)}</td><td>${when(p.createdAt, now)}</td></tr>`;
}

export function renderProposalListPage(view: ProposalListView, signedIn: SignedIn): string {
  const tabs = STATUSES.map((s) =>
    s === view.status
      ? html`<li><a href="/ui/proposals?status=${s}" aria-current="page">${STATUS_TEXT[s]}</a></li>`
      : html`<li><a href="/ui/proposals?status=${s}">${STATUS_TEXT[s]}</a></li>`,
  );
  const edges =
    view.edges.length === 0
      ? html`<p class="muted">None.</p>`
      : html`<div class="scroll"><table><thead><tr><th scope="col">Newer memory</th><th scope="col">Would</th><th scope="col">Older memory</th><th scope="col">How alike</th><th scope="col">Proposed</th></tr></thead>
        <tbody>${view.edges.map((p) => edgeRow(p, view.now))}</tbody></table></div>`;
  const facts =
    view.facts.length === 0
      ? html`<p class="muted">None.</p>`
      : html`<div class="scroll"><table><thead><tr><th scope="col">Subject</th><th scope="col">Measure</th><th scope="col">Value</th><th scope="col">How it was found</th><th scope="col">Proposed</th></tr></thead>
        <tbody>${view.facts.map((p) => factRow(p, view.now))}</tbody></table></div>`;
  const more = view.moreLimit === undefined ? html`` : html`<p><a href="/ui/proposals?status=${view.status}&amp;limit=${view.moreLimit}">Show more</a></p>`;
  return layout(
    `${STATUS_TEXT[view.status]} proposals`,
    html`<h1>${STATUS_TEXT[view.status]} proposals</h1>
      ${flashHtml(view.flash)}
      <p>Background work only suggests: links between memories that say nearly the same thing, and facts read out of a memory. Nothing changes until you accept it.</p>
      <nav aria-label="Status" class="tabs"><ul class="actions">${tabs}</ul></nav>
      <p class="muted">Newest first, at most ${view.limit} of each kind. Open one to compare and decide.</p>
      <h2>Links between memories (${view.edges.length})</h2>
      ${edges}
      <h2>Facts read from memories (${view.facts.length})</h2>
      ${facts}
      ${more}`,
    { ...signedIn, section: "proposals" },
  );
}

export type ProposalDetailView =
  | { kind: "edge"; proposal: EdgeProposalRecord; newer?: MemoryRecord; older?: MemoryRecord; flash?: Flash; now: number }
  | { kind: "fact"; proposal: FactProposalRecord; memory?: MemoryRecord; flash?: Flash; now: number };

function decisionHtml(p: { status: ProposalStatus; decidedAt: string | null; decisionRationale: string | null }, now: number): Html {
  if (p.status === "proposed") return html``;
  const why = p.decisionRationale === null ? html`` : html` Reason given: <q>${p.decisionRationale}</q>`;
  return html`<p class="flash notice">${p.status === "applied" ? "Accepted" : "Rejected"} ${when(p.decidedAt, now, "")}.${why}</p>`;
}

function decideForms(id: string, signedIn: SignedIn): Html {
  if (!signedIn.canWrite) return html`<p class="muted">Your key can read but not write, so it cannot accept or reject proposals.</p>`;
  const csrf = csrfField(signedIn.csrfToken);
  return html`<section aria-labelledby="decide-heading">
      <h2 id="decide-heading">Decide</h2>
      <div class="decide card">
        <form method="post" action="/ui/proposals/${id}/accept">${csrf}<button type="submit">Accept</button></form>
        <form method="post" action="/ui/proposals/${id}/reject" class="reject">${csrf}
          <label for="rationale">Or reject it, and say why (optional)</label>
          <textarea id="rationale" name="rationale" maxlength="2000"></textarea>
          <button type="submit" class="quiet">Reject</button>
        </form>
      </div>
      </section>`;
}

/** The raw rationale code, kept for whoever needs it, out of the way. */
function technical(rationale: string | null): Html {
  return rationale === null ? html`` : html`<details><summary>Technical detail</summary><p><code>${rationale}</code></p></details>`;
}

export function renderProposalPage(view: ProposalDetailView, signedIn: SignedIn): string {
  const p = view.proposal;
  const decide = p.status === "proposed" ? decideForms(p.id, signedIn) : decisionHtml(p, view.now);
  const nav = { ...signedIn, section: "proposals" as const };
  if (view.kind === "edge") {
    const edge = view.proposal;
    return layout(
      "Link proposal",
      html`<h1>Proposed: the newer memory ${EDGE_TEXT[edge.edgeType]} the older one</h1>
      ${flashHtml(view.flash)}
      <p>${edgeReason(edge)} Proposed ${when(edge.createdAt, view.now)}.</p>
      ${technical(edge.rationale)}
      <div class="pair">
        ${memoryCard("Newer", view.newer, edge.fromId, view.now)}
        ${memoryCard("Older", view.older, edge.toId, view.now)}
      </div>
      ${decide}`,
      nav,
    );
  }
  const fact = view.proposal;
  return layout(
    "Fact proposal",
    html`<h1>Proposed fact about ${fact.subject}</h1>
      ${flashHtml(view.flash)}
      <div class="pair">
        <section class="card">
          <h2>The fact</h2>
          <dl><dt>Subject</dt><dd>${fact.subject}</dd><dt>Measure</dt><dd>${fact.predicate}</dd><dt>Value</dt><dd>${fact.value}</dd><dt>Confidence</dt><dd>${confidenceText(fact.confidence)}</dd><dt>Found</dt><dd>${factReason(fact.rationale)}</dd><dt>Proposed</dt><dd>${when(fact.createdAt, view.now)}</dd></dl>
          ${technical(fact.rationale === null ? null : `${fact.extractor}: ${fact.rationale}`)}
        </section>
        ${memoryCard("Read from", view.memory, fact.memoryId, view.now)}
      </div>
      ${decide}`,
    nav,
  );
}
