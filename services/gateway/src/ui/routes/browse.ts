/**
 * The read-only pages, each over the same RPC and mapping as its tool and REST route:
 *
 *   GET /ui/overview?kind=&scope=&project=     Briefing for one selector (+ how many proposals wait, how far embedding is)
 *   GET /ui/search?query=&memoryType=&…        Search: every filter, both orders, cursor paging
 *   GET /ui/memories/:id                       GetMemories + GetHistory: content, commitment, lineage
 *   GET /ui/facts?subject=&predicate=          GetFacts: current facts, or a subject's whole history
 */
import { AppError } from "@3ngram/errors";
import { SCOPES } from "@3ngram/rpc";
import { MAX_FACTS_LIMIT, MAX_GET_CONTENT_CHARS, memoryIdSchema, parseInput, searchInputSchema } from "@3ngram/schema";
import type { Request, Router } from "express";
import { identityFor } from "../../http/identity.js";
import { routeLabel } from "../../http/locals.js";
import { factsQueryToInput } from "../../rest/facts.js";
import { briefingQueryToInput } from "../../rest/orientation.js";
import { type UiKit, field } from "../kit.js";
import { renderFactsPage } from "../pages/facts.js";
import { renderMemoryPage } from "../pages/memory.js";
import { renderOverviewPage, type OverviewForm } from "../pages/overview.js";
import { DEFAULT_SEARCH_PAGE_SIZE, renderSearchPage, type SearchForm } from "../pages/search.js";
import { readFacets, readMemories } from "./reads.js";

/** Items per dashboard section: more than a brief briefing, fewer than a full one. */
const OVERVIEW_SECTION_LIMIT = 10;
const SEARCH_FIELDS = ["query", "memoryType", "scope", "project", "status", "order", "limit"] as const;

export function browseRoutes(router: Router, kit: UiKit): void {
  const { memory, search, page, signedInView, signedIn } = kit;

  router.get("/overview", routeLabel("GET /ui/overview"), ...signedIn, async (req, res) => {
    const identity = identityFor(res, SCOPES.read);
    const form: OverviewForm = { kind: field(req.query, "kind") || "all", scope: field(req.query, "scope"), project: field(req.query, "project") };
    const withScope = form.kind === "scope" || form.kind === "scope_project";
    const withProject = form.kind === "project" || form.kind === "scope_project";
    const input = briefingQueryToInput({
      kind: form.kind,
      ...(withScope && form.scope !== "" ? { scope: form.scope } : {}),
      ...(withProject && form.project !== "" ? { project: form.project } : {}),
      sectionLimit: String(OVERVIEW_SECTION_LIMIT),
    });
    const [briefing, facets, environment] = await Promise.all([
      memory.orientation.briefing(input, { identity }),
      readFacets(memory, identity),
      memory.orientation.describeEnvironment({}, { identity }),
    ]);
    // The exact count of both kinds, the figure describe_environment answers (a list would stop at its page).
    const { embeddings, pendingEmbeddings, pendingProposals } = environment.stats;
    page(
      res,
      200,
      renderOverviewPage(
        { form, facets, briefing, pendingProposals: pendingProposals.total, embeddings, pendingEmbeddings, now: Date.now() },
        signedInView(res),
      ),
    );
  });

  router.get("/search", routeLabel("GET /ui/search"), ...signedIn, async (req, res) => {
    const identity = identityFor(res, SCOPES.read);
    const form = Object.fromEntries(SEARCH_FIELDS.map((name) => [name, field(req.query, name).trim()])) as unknown as SearchForm;
    const cursor = field(req.query, "cursor");
    const facets = await readFacets(memory, identity);
    const asked = SEARCH_FIELDS.some((name) => name !== "order" && name !== "limit" && form[name] !== "");
    if (!asked) {
      page(res, 200, renderSearchPage({ form, facets, now: Date.now() }, signedInView(res)));
      return;
    }
    const input = parseInput(searchInputSchema, {
      ...Object.fromEntries(SEARCH_FIELDS.filter((name) => name !== "limit" && form[name] !== "").map((name) => [name, form[name]])),
      limit: Number(form.limit === "" ? DEFAULT_SEARCH_PAGE_SIZE : form.limit),
      ...(cursor !== "" ? { cursor } : {}),
    });
    const result = await search.search.search(input, { identity });
    const nextHref = result.nextCursor === undefined ? undefined : `/ui/search?${pageQuery(form, result.nextCursor)}`;
    page(res, 200, renderSearchPage({ form, facets, result, now: Date.now(), ...(nextHref ? { nextHref } : {}) }, signedInView(res)));
  });

  router.get("/memories/:id", routeLabel("GET /ui/memories/:id"), ...signedIn, async (req, res) => {
    const identity = identityFor(res, SCOPES.read);
    const id = memoryIdFromPath(req);
    const [found] = await readMemories(memory, [id], identity, MAX_GET_CONTENT_CHARS);
    if (found === undefined) throw new AppError("not_found", "memory not found");
    const history = await memory.memories.getHistory({ memoryId: id }, { identity });
    page(res, 200, renderMemoryPage({ memory: found, history, now: Date.now() }, signedInView(res)));
  });

  router.get("/facts", routeLabel("GET /ui/facts"), ...signedIn, async (req, res) => {
    const identity = identityFor(res, SCOPES.read);
    const subject = field(req.query, "subject").trim();
    const predicate = field(req.query, "predicate").trim();
    // A subject's whole history (an open range), or, without one, what is true now.
    const input = factsQueryToInput({
      ...(subject !== "" ? { subject, from: "" } : {}),
      ...(subject !== "" && predicate !== "" ? { predicate } : {}),
      limit: String(MAX_FACTS_LIMIT),
    });
    const { facts } = await memory.memories.getFacts(input, { identity });
    page(
      res,
      200,
      renderFactsPage(
        { subject, predicate: subject === "" ? "" : predicate, facts, full: facts.length >= MAX_FACTS_LIMIT, now: Date.now() },
        signedInView(res),
      ),
    );
  });
}

/** The same search, one page on: every field the person set, plus the cursor. */
function pageQuery(form: SearchForm, cursor: string): string {
  const query = new URLSearchParams();
  for (const name of SEARCH_FIELDS) if (form[name] !== "") query.set(name, form[name]);
  query.set("cursor", cursor);
  return query.toString();
}

/** The path's memory id; a malformed one is answered like an unknown one. */
function memoryIdFromPath(req: Request): string {
  const id = memoryIdSchema.safeParse(req.params.id);
  if (!id.success) throw new AppError("not_found", "memory not found");
  return id.data.toLowerCase();
}
