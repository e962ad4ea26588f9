/** The dashboard: what a briefing shows an agent, for one selector, laid out for a person. */
import type { BriefingCommitment, BriefingMemory, BriefingOutput, CommitmentSection, DescribeEnvironmentOutput, MemorySection } from "@3ngram/schema";
import { COMMITMENT_TEXT, count, when } from "../format.js";
import { html, type Html } from "../../http/html.js";
import { layout, type SignedIn } from "../layout.js";
import { memoryLink, placeText, typeTag } from "./parts.js";

export interface OverviewForm {
  kind: string;
  scope: string;
  project: string;
}

export interface OverviewPageView {
  form: OverviewForm;
  facets: { scopes: string[]; projects: string[] };
  briefing: BriefingOutput;
  /** Proposals waiting for a decision (at most the list's limit). */
  pendingProposals: number;
  /** How many live memories carry the configured model's vector (describe_environment's stats). */
  embeddings: DescribeEnvironmentOutput["stats"]["embeddings"];
  /** Live memories without any vector. */
  pendingEmbeddings: number;
  now: number;
}

function choice(value: string, text: string, selected: string): Html {
  return value === selected ? html`<option value="${value}" selected>${text}</option>` : html`<option value="${value}">${text}</option>`;
}

function selectorForm(form: OverviewForm, facets: OverviewPageView["facets"]): Html {
  return html`<form method="get" action="/ui/overview" class="card">
      <div class="fields">
        <div><label for="kind">Show</label><select id="kind" name="kind">${choice("all", "Everything", form.kind)}${choice("scope", "One scope", form.kind)}${choice("project", "One project", form.kind)}${choice("scope_project", "A project within a scope", form.kind)}</select></div>
        <div><label for="scope">Scope</label><select id="scope" name="scope"><option value="">—</option>${facets.scopes.map((s) => choice(s, s, form.scope))}</select></div>
        <div><label for="project">Project</label><select id="project" name="project"><option value="">—</option>${facets.projects.map((p) => choice(p, p, form.project))}</select></div>
        <div><button type="submit">Show</button></div>
      </div>
    </form>`;
}

function commitmentLine(c: BriefingCommitment, now: number): Html {
  const due = c.dueAt === null ? html`no due date` : html`due ${when(c.dueAt, now)}`;
  return html`<li>${memoryLink(c.memoryId, c.topic)}<div class="meta"><span class="tag ${c.overdue ? "bad" : ""}">${c.overdue ? "Overdue" : COMMITMENT_TEXT[c.status]}</span><span>${due}</span>${c.owner === null ? "" : html`<span>owner ${c.owner}</span>`}</div></li>`;
}

function memoryLine(m: BriefingMemory, now: number): Html {
  return html`<li>${memoryLink(m.id, m.topic)}<div class="meta">${typeTag(m.memoryType)} ${placeText(m)} <span>recorded ${when(m.recordedAt, now)}</span></div></li>`;
}

function sectionCard<T>(
  id: string,
  title: string,
  hint: string,
  section: { count: number; items: T[]; hasMore: boolean } | undefined,
  line: (item: T) => Html,
): Html {
  if (section === undefined) return html``;
  const body = section.count === 0 ? html`<p class="muted">Nothing here.</p>` : html`<ul class="plain">${section.items.map(line)}</ul>`;
  const more = section.hasMore ? html`<p class="muted">and ${section.count - section.items.length} more</p>` : html``;
  return html`<section class="card" aria-labelledby="${id}"><h2 id="${id}">${title} <span class="tag">${section.count}</span></h2><p class="hint">${hint}</p>${body}${more}</section>`;
}

/**
 * While memories wait for the configured model's vector: how far it is. "Re-embedding" when some
 * carry another model's vector (the model changed), "Embedding" when they have none yet.
 */
function embeddingProgress(view: OverviewPageView): Html {
  const e = view.embeddings;
  if (e === null || e.pending === 0) return html``;
  const verb = e.pending > view.pendingEmbeddings ? "Re-embedding" : "Embedding";
  return html`<p class="flash notice" id="embedding-progress">${verb} with ${e.model} for meaning search: ${count(e.embedded)} of ${count(e.embedded + e.pending)} memories done. Until then, search finds the others by their words.</p>`;
}

export function renderOverviewPage(view: OverviewPageView, signedIn: SignedIn): string {
  const b = view.briefing;
  const c = (s: CommitmentSection | undefined, id: string, title: string, hint: string) =>
    sectionCard(id, title, hint, s, (item: BriefingCommitment) => commitmentLine(item, view.now));
  const m = (s: MemorySection | undefined, id: string, title: string, hint: string) =>
    sectionCard(id, title, hint, s, (item: BriefingMemory) => memoryLine(item, view.now));
  const narrowed = b.appliedScope === undefined ? html`` : html`<p class="muted">Showing scope ${b.appliedScope}, your default scope.</p>`;
  const pending =
    view.pendingProposals === 0
      ? html``
      : html`<p class="flash notice"><a href="/ui/proposals">${view.pendingProposals} ${view.pendingProposals === 1 ? "proposal waits" : "proposals wait"} for your review</a>.</p>`;
  return layout(
    "Overview",
    html`<h1>Overview</h1>
      <p class="muted">What an agent sees at the start of a session, as of ${when(b.generatedAt, view.now)}.</p>
      ${selectorForm(view.form, view.facets)}
      ${narrowed}
      ${pending}
      ${embeddingProgress(view)}
      <div class="grid">
        ${c(b.overdue, "overdue", "Overdue", "Commitments past their due date.")}
        ${c(b.commitments, "commitments", "Open commitments", "Promises still open or waiting, most pressing first.")}
        ${m(b.blockers, "blockers", "Blockers", "What is in the way.")}
        ${m(b.recentDecisions, "decisions", "Recent decisions", "The newest decisions.")}
        ${m(b.staleCandidates, "stale", "Worth re-checking", "Decisions, preferences, blockers and facts not updated in over 30 days: are they still true?")}
        ${m(b.preferences, "preferences", "Preferences", "How things should be done.")}
      </div>`,
    { ...signedIn, section: "overview" },
  );
}
