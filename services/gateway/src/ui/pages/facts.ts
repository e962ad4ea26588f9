/**
 * Facts over time: pick a subject (and a measure), see every value it has had. Numeric measures
 * are drawn as a chart over valid time; text values are a timeline. Replaced values stay visible.
 */
import type { FactRecord } from "@3ngram/schema";
import { factChart, isNumericSeries, standing } from "../chart.js";
import { versionHref } from "../anchors.js";
import { when } from "../format.js";
import { html, type Html } from "../../http/html.js";
import { layout, type SignedIn } from "../layout.js";

export interface FactsPageView {
  subject: string;
  predicate: string;
  /** With a subject: its whole history, oldest first. Without: what is true now, across subjects. */
  facts: FactRecord[];
  /** The read hit its limit, so older values may be missing. */
  full: boolean;
  now: number;
}

function pickForm(view: FactsPageView): Html {
  return html`<form method="get" action="/ui/facts" class="card">
      <div class="fields">
        <div><label for="subject">Subject</label><input id="subject" name="subject" type="text" value="${view.subject}" maxlength="256" required></div>
        <div><label for="predicate">Measure (optional)</label><input id="predicate" name="predicate" type="text" value="${view.predicate}" maxlength="256"></div>
        <div><button type="submit">Show history</button></div>
      </div>
    </form>`;
}

function factsHref(subject: string, predicate?: string): string {
  const query = new URLSearchParams({ subject, ...(predicate !== undefined ? { predicate } : {}) });
  return `/ui/facts?${query.toString()}`;
}

/** The memory that recorded the value, opened at what that version changed. */
function sourceLink(fact: FactRecord): Html {
  return fact.memoryId === null ? html`<span class="muted">no memory</span>` : html`<a href="${versionHref(fact.memoryId)}">memory and its change</a>`;
}

function generationsTable(facts: readonly FactRecord[], now: number): Html {
  return html`<div class="scroll"><table><thead><tr><th scope="col">Value</th><th scope="col">True from</th><th scope="col">Until</th><th scope="col">Recorded</th><th scope="col">Source</th></tr></thead>
      <tbody>${facts.map(
        (f) =>
          html`<tr><td>${f.value} ${standingTag(f, now)}</td><td>${when(f.validFrom, now)}</td><td>${when(f.validTo, now, "still true")}</td><td>${when(f.recordedAt, now)}</td><td>${sourceLink(f)}</td></tr>`,
      )}</tbody></table></div>`;
}

function series(index: number, subject: string, predicate: string, facts: FactRecord[], now: number): Html {
  const numeric = isNumericSeries(facts);
  return html`<section class="card series" aria-labelledby="series-${index}">
      <h2 id="series-${index}">${predicate}</h2>
      <p class="muted">${facts.length} ${facts.length === 1 ? "value" : "values"} for ${subject}${numeric ? ", drawn over the time each was true" : ""}.</p>
      ${numeric ? factChart(`${subject} ${predicate}`, facts, now) : html``}
      ${generationsTable(facts, now)}
    </section>`;
}

export function renderFactsPage(view: FactsPageView, signedIn: SignedIn): string {
  let body: Html;
  if (view.subject === "") {
    const bySubject = new Map<string, Set<string>>();
    for (const f of view.facts) (bySubject.get(f.subject) ?? bySubject.set(f.subject, new Set()).get(f.subject)!).add(f.predicate);
    body =
      bySubject.size === 0
        ? html`<p class="muted">No facts are stored yet. Agents add them with remember's facts, and accepted fact proposals add more.</p>`
        : html`<h2>Subjects with current facts</h2><ul class="plain">${[...bySubject].map(
            ([subject, predicates]) =>
              html`<li><a href="${factsHref(subject)}">${subject}</a> <span class="muted">— ${[...predicates].map((p, i) => html`${i > 0 ? ", " : ""}<a href="${factsHref(subject, p)}">${p}</a>`)}</span></li>`,
          )}</ul>`;
  } else {
    const byPredicate = new Map<string, FactRecord[]>();
    for (const f of view.facts) (byPredicate.get(f.predicate) ?? byPredicate.set(f.predicate, []).get(f.predicate)!).push(f);
    body =
      byPredicate.size === 0
        ? html`<p class="flash problem" role="status">Nothing is stored about ${view.subject}${view.predicate ? ` (${view.predicate})` : ""}.</p>`
        : html`${[...byPredicate].map(([predicate, facts], i) => series(i, view.subject, predicate, facts, view.now))}`;
  }
  const truncated = view.full ? html`<p class="muted">Only the first ${view.facts.length} values are shown; name a measure to narrow it.</p>` : html``;
  return layout(
    view.subject === "" ? "Facts" : `Facts about ${view.subject}`,
    html`<h1>${view.subject === "" ? "Facts over time" : html`Facts about ${view.subject}`}</h1>
      ${pickForm(view)}
      ${body}
      ${truncated}`,
    { ...signedIn, section: "facts" },
  );
}

function standingTag(f: FactRecord, now: number): Html {
  const stands = standing(f, now);
  return stands === "current" ? html`<span class="tag good">current</span>` : html`<span class="tag">${stands}</span>`;
}
