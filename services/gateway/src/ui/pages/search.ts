/** Browse and search: the Search RPC's filters as a form, hits with excerpts, the verdict in words. */
import { MEMORY_TYPES, type SearchHit, type SearchOutput } from "@3ngram/schema";
import { TYPE_TEXT, when } from "../format.js";
import { html, type Html } from "../../http/html.js";
import { layout, type SignedIn } from "../layout.js";
import { memoryLink, placeText, typeTag } from "./parts.js";

/** The form's fields as the person filled them (text as typed, empty when not set). */
export interface SearchForm {
  query: string;
  memoryType: string;
  scope: string;
  project: string;
  status: string;
  order: string;
  limit: string;
}

/** Results per page a person can pick; the first is the default, as for the search tool (docs/search.md). */
const SEARCH_PAGE_SIZES = ["5", "10", "25"] as const;
export const DEFAULT_SEARCH_PAGE_SIZE = SEARCH_PAGE_SIZES[0];

export interface SearchPageView {
  form: SearchForm;
  facets: { scopes: string[]; projects: string[] };
  result?: SearchOutput;
  /** The next page's address, when there is one. */
  nextHref?: string;
  now: number;
}

function options(values: readonly string[], selected: string, labels: (v: string) => string = (v) => v): Html[] {
  return values.map((v) => (v === selected ? html`<option value="${v}" selected>${labels(v)}</option>` : html`<option value="${v}">${labels(v)}</option>`));
}

function select(name: string, label: string, choices: Html[], anyText: string): Html {
  return html`<div><label for="${name}">${label}</label><select id="${name}" name="${name}"><option value="">${anyText}</option>${choices}</select></div>`;
}

function searchForm(form: SearchForm, facets: SearchPageView["facets"]): Html {
  return html`<form method="get" action="/ui/search" class="card" role="search">
      <div class="fields">
        <div class="wide"><label for="query">Search for</label><input id="query" name="query" type="search" value="${form.query}" placeholder="What was decided about the release date?" maxlength="2000"></div>
        ${select(
          "memoryType",
          "Type",
          options(MEMORY_TYPES, form.memoryType, (t) => TYPE_TEXT[t as keyof typeof TYPE_TEXT]),
          "Any type",
        )}
        ${select("scope", "Scope", options(facets.scopes, form.scope), "Any scope")}
        ${select("project", "Project", options(facets.projects, form.project), "Any project")}
        ${select(
          "status",
          "Status",
          // Search's "active" keeps replaced memories (ranked below what replaced them), so it is not
          // "live" as the memory pages use the word: active and never replaced.
          options(["active", "archived"], form.status, (s) => (s === "active" ? "Not archived" : "Archived only")),
          "Not archived (default)",
        )}
        <div><label for="order">Order</label><select id="order" name="order">${options(["relevance", "chronological"], form.order || "relevance", (o) => (o === "relevance" ? "Best match first" : "Newest first"))}</select></div>
        <div><label for="limit">Per page</label><select id="limit" name="limit">${options(SEARCH_PAGE_SIZES, form.limit || DEFAULT_SEARCH_PAGE_SIZE)}</select></div>
      </div>
      <div class="actions"><button type="submit">Search</button><span class="hint">Without words, “Newest first” lists everything that matches the filters.</span></div>
    </form>`;
}

function hitItem(hit: SearchHit, now: number): Html {
  return html`<li class="hit">
      <h3>${memoryLink(hit.id, hit.topic)}</h3>
      <p class="meta">${typeTag(hit.memoryType)} ${placeText(hit)} <span>recorded ${when(hit.recordedAt, now)}</span></p>
      <p class="content">${hit.content}</p>
    </li>`;
}

/** What was searched and what the answer means, in words rather than coverage fields. */
function verdict(result: SearchOutput): Html {
  const { coverage } = result;
  const notes: string[] = [];
  const down = coverage.legs.filter((l) => !l.available).map((l) => (l.leg === "vector" ? "meaning" : l.leg === "fts" ? "keywords" : "recency"));
  if (down.length > 0) notes.push(`Search by ${down.join(" and ")} was unavailable, so the rest did the work.`);
  if (coverage.appliedScope !== null) notes.push(`Only scope ${coverage.appliedScope} was searched (your default scope).`);
  const noteHtml = notes.map((n) => html`<p class="muted">${n}</p>`);
  if (coverage.abstained) {
    return html`<div class="card" role="status"><p class="verdict">Nothing stored about this.</p><p>No memory matches closely enough; it was probably never recorded. Try other words or fewer filters.</p>${noteHtml}</div>`;
  }
  if (result.count === 0) return html`<div class="card" role="status"><p class="verdict">No memories match these filters.</p>${noteHtml}</div>`;
  const how = coverage.order === "chronological" ? "newest first" : "best match first, by meaning, keywords and how recent";
  const more = result.hasMore ? "; more on the next page" : "";
  return html`<div role="status"><p class="verdict">Found ${result.count} ${result.count === 1 ? "memory" : "memories"} (${how}${more}).</p>${noteHtml}</div>`;
}

export function renderSearchPage(view: SearchPageView, signedIn: SignedIn): string {
  const result = view.result;
  const list = (hits: SearchHit[]) => html`<ul class="plain">${hits.map((h) => hitItem(h, view.now))}</ul>`;
  // When nothing relevant is stored the nearest memories are still returned; they stay folded away.
  const hits =
    result === undefined
      ? html``
      : result.coverage.abstained && result.count > 0
        ? html`${verdict(result)}<details class="closest"><summary>Show the closest memories anyway (${result.count})</summary>${list(result.hits as SearchHit[])}</details>`
        : html`${verdict(result)}${list(result.hits as SearchHit[])}`;
  const next = view.nextHref === undefined ? html`` : html`<p class="actions"><a class="button quiet" href="${view.nextHref}">Next page</a></p>`;
  return layout(
    "Search",
    html`<h1>Search memories</h1>
      ${searchForm(view.form, view.facets)}
      <section aria-label="Results">${hits}${next}</section>`,
    { ...signedIn, section: "search" },
  );
}
