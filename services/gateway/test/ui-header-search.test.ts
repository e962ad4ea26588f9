/**
 * The search field every signed-in page carries in its header, and the Search page it sends the
 * query to: its own form stays the page's one form[role=search], 5 results per page unless asked.
 */
import { describe, expect, it } from "vitest";
import { messagePage } from "../src/ui/layout.js";
import { renderFactsPage } from "../src/ui/pages/facts.js";
import { DEFAULT_SEARCH_PAGE_SIZE, renderSearchPage, type SearchForm } from "../src/ui/pages/search.js";

const NOW = Date.parse("2026-03-10T12:00:00Z");
const signedIn = { csrfToken: "token", canWrite: true };

describe("the search field in the header", () => {
  const emptyForm: SearchForm = { query: "", memoryType: "", scope: "", project: "", status: "", order: "", limit: "" };
  const header = (page: string) => page.slice(page.indexOf("<header"), page.indexOf("</header>"));

  it("is on every signed-in page and sends the query to the Search page", () => {
    const pages = [
      renderFactsPage({ subject: "", predicate: "", facts: [], full: false, now: NOW }, signedIn),
      renderSearchPage({ form: emptyForm, facets: { scopes: [], projects: [] }, now: NOW }, signedIn),
      messagePage("Not found", "no such page", signedIn),
    ];
    for (const page of pages) {
      expect(header(page)).toMatch(/<search class="find" aria-label="Search memories">\s*<form method="get" action="\/ui\/search">/);
      expect(header(page)).toContain('<input id="find-query" name="query" type="search"');
    }
  });

  it("is not on a page shown before sign-in", () => {
    expect(messagePage("Not found", "no such page")).not.toContain("find-query");
  });

  it("leaves the Search page's own form the only form[role=search], its field ids unique", () => {
    const page = renderSearchPage({ form: emptyForm, facets: { scopes: [], projects: [] }, now: NOW }, signedIn);
    expect(page.match(/role="search"/g)).toHaveLength(1);
    expect(page.match(/id="query"/g)).toHaveLength(1);
    expect(page.match(/id="find-query"/g)).toHaveLength(1);
  });

  it("offers 5, 10 or 25 results per page, 5 unless another was asked for", () => {
    expect(DEFAULT_SEARCH_PAGE_SIZE).toBe("5");
    const limitSelect = (limit: string) => {
      const page = renderSearchPage({ form: { ...emptyForm, limit }, facets: { scopes: [], projects: [] }, now: NOW }, signedIn);
      return page.slice(page.indexOf('<select id="limit"'), page.indexOf("</select>", page.indexOf('<select id="limit"')));
    };
    expect(limitSelect("")).toBe(
      '<select id="limit" name="limit"><option value="5" selected>5</option><option value="10">10</option><option value="25">25</option>',
    );
    expect(limitSelect("25")).toContain('<option value="25" selected>25</option>');
    expect(limitSelect("25")).not.toContain('<option value="5" selected>');
  });
});
