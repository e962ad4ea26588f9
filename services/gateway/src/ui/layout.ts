/** The frame every page shares: head, header with the main navigation and a search field, flash line, footer. */
import { html, render, type Html } from "../http/html.js";

/** What the header needs to show the signed-in state and the sign-out button. */
export interface SignedIn {
  csrfToken: string;
  canWrite: boolean;
  /** Which nav entry is the current page. */
  section?: Section;
}

/** A line shown at the top of a page: a notice after success, or a problem. */
export interface Flash {
  kind: "notice" | "problem";
  text: string;
}

type Section = "overview" | "search" | "facts" | "proposals" | "keys";

const NAV: ReadonlyArray<[Section, string, string]> = [
  ["overview", "/ui/overview", "Overview"],
  ["search", "/ui/search", "Search"],
  ["facts", "/ui/facts", "Facts"],
  ["proposals", "/ui/proposals", "Proposals"],
  ["keys", "/ui/keys", "Keys"],
];

export function csrfField(token: string): Html {
  return html`<input type="hidden" name="csrf_token" value="${token}">`;
}

export function flashHtml(flash: Flash | undefined): Html {
  if (flash === undefined) return html``;
  return html`<p class="flash ${flash.kind}" role="${flash.kind === "problem" ? "alert" : "status"}">${flash.text}</p>`;
}

/**
 * A search from any page: the query alone, sent to the Search page, which answers with its default
 * number of results and offers every filter from there. The search element makes it a landmark
 * without a form role of its own, so the Search page's full form stays the one form[role=search].
 */
function headerSearch(): Html {
  return html`<search class="find" aria-label="Search memories">
        <form method="get" action="/ui/search">
          <label for="find-query" class="visually-hidden">Search memories</label>
          <input id="find-query" name="query" type="search" placeholder="Search memories" maxlength="2000" required>
          <button type="submit" class="quiet">Search</button>
        </form>
      </search>`;
}

function header(signedIn: SignedIn | undefined): Html {
  if (signedIn === undefined) return html`<header class="top"><span class="brand">3ngram</span></header>`;
  const items = NAV.map(([section, href, label]) =>
    section === signedIn.section ? html`<li><a href="${href}" aria-current="page">${label}</a></li>` : html`<li><a href="${href}">${label}</a></li>`,
  );
  return html`<header class="top">
      <a class="brand" href="/ui/overview">3ngram</a>
      <nav aria-label="Main"><ul>${items}</ul></nav>
      ${headerSearch()}
      <form method="post" action="/ui/sign-out">${csrfField(signedIn.csrfToken)}<button type="submit" class="quiet">Sign out</button></form>
    </header>`;
}

export function layout(title: string, body: Html, signedIn?: SignedIn): string {
  return render(html`<!doctype html>
<html lang="en">
  <head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title} · 3ngram</title><link rel="stylesheet" href="/ui/style.css"></head>
  <body>
    <a class="skip" href="#main">Skip to content</a>
    ${header(signedIn)}
    <main id="main" tabindex="-1">
${body}
    </main>
  </body>
</html>
`);
}

export function messagePage(title: string, text: string, signedIn?: SignedIn): string {
  const back = signedIn ? html`<p><a href="/ui/overview">Back to the overview</a></p>` : html`<p><a href="/ui/sign-in">Sign in</a></p>`;
  return layout(title, html`<h1>${title}</h1>\n      <p>${text}</p>\n      ${back}`, signedIn);
}
