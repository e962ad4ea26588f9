/**
 *   GET  /ui/proposals?status=&limit=   the list (memory:read), newest first, `limit` of each kind
 *   GET  /ui/proposals/:id              one proposal (any status) beside the memories it touches
 *   POST /ui/proposals/:id/accept       (memory:write)
 *   POST /ui/proposals/:id/reject       optional rationale (memory:write)
 */
import { isAppError } from "@3ngram/errors";
import { SCOPES, type CallerIdentity } from "@3ngram/rpc";
import { MAX_PROPOSALS_LIMIT, listProposalsQuerySchema, parseInput, rejectProposalBodySchema } from "@3ngram/schema";
import type { RequestHandler, Router } from "express";
import type { MemoryPeer } from "../../clients/memory.js";
import { getProposal, proposalIdFromPath, reviewProposals } from "../../clients/proposals.js";
import { identityFor } from "../../http/identity.js";
import { requestIdOf, routeLabel } from "../../http/locals.js";
import { logError } from "../../rest/errors.js";
import { type UiKit, field, sessionOf } from "../kit.js";
import { messagePage, type Flash } from "../layout.js";
import { renderProposalListPage, renderProposalPage, type ProposalDetailView } from "../pages/proposals.js";
import { readMemories } from "./reads.js";

const DONE_TEXT: Record<string, string> = { applied: "Proposal accepted.", rejected: "Proposal rejected." };

export function proposalRoutes(router: Router, kit: UiKit): void {
  const { memory, log, page, signedInView, signedIn, form, requireCsrf } = kit;

  router.get("/proposals", routeLabel("GET /ui/proposals"), ...signedIn, async (req, res) => {
    const identity = identityFor(res, SCOPES.read);
    const raw = req.query as Record<string, unknown>;
    const query = parseInput(listProposalsQuerySchema, {
      ...(raw.status !== undefined ? { status: raw.status } : {}),
      ...(raw.limit !== undefined ? { limit: raw.limit } : {}),
    });
    const list = await reviewProposals({ action: "list", ...query }, { memory, identity });
    const edges = list.proposals ?? [];
    const facts = list.factProposals ?? [];
    const full = edges.length >= query.limit || facts.length >= query.limit;
    const doneKey = field(raw, "done");
    // Own keys only: ?done=constructor must not find Object.prototype's.
    const done = Object.hasOwn(DONE_TEXT, doneKey) ? DONE_TEXT[doneKey] : undefined;
    const view = {
      ...query,
      edges,
      facts,
      now: Date.now(),
      ...(full && query.limit < MAX_PROPOSALS_LIMIT ? { moreLimit: Math.min(query.limit * 2, MAX_PROPOSALS_LIMIT) } : {}),
      ...(done ? { flash: { kind: "notice" as const, text: done } } : {}),
    };
    page(res, 200, renderProposalListPage(view, signedInView(res)));
  });

  router.get("/proposals/:id", routeLabel("GET /ui/proposals/:id"), ...signedIn, async (req, res) => {
    const identity = identityFor(res, SCOPES.read);
    const view = await proposalView(memory, proposalIdFromPath(req.params.id), identity);
    page(res, 200, renderProposalPage(view, signedInView(res)));
  });

  const decide =
    (action: "accept" | "reject"): RequestHandler =>
    async (req, res) => {
      const session = sessionOf(res);
      if (!session.scopes.includes(SCOPES.write)) {
        log.warn({ request_id: requestIdOf(res), reason: "insufficient_scope" }, "decision refused");
        page(res, 403, messagePage("Not allowed", "Your API key can read but not write, so it cannot accept or reject proposals.", signedInView(res)));
        return;
      }
      const identity = identityFor(res, SCOPES.write);
      const id = proposalIdFromPath(req.params.id);
      const rationale = field(req.body, "rationale").trim() === "" ? undefined : field(req.body, "rationale");
      const input =
        action === "accept"
          ? ({ action, proposalId: id } as const)
          : ({ action, proposalId: id, ...parseInput(rejectProposalBodySchema, rationale === undefined ? {} : { rationale }) } as const);
      try {
        const outcome = await reviewProposals(input, { memory, identity });
        log.info({ request_id: requestIdOf(res), tenant_id: session.tenantId, proposal_id: id, action: outcome.action }, "proposal decided in the ui");
        res.set("Cache-Control", "no-store");
        res.redirect(303, `/ui/proposals?done=${action === "accept" ? "applied" : "rejected"}`);
      } catch (err) {
        // Already decided, or no longer applicable: say so on the proposal's own page.
        if (isAppError(err) && (err.reason === "conflict" || err.reason === "invalid_transition")) {
          logError(log, err, err, requestIdOf(res));
          const flash: Flash = { kind: "problem", text: `This proposal could not be ${action === "accept" ? "accepted" : "rejected"}: ${err.message}` };
          const view = await proposalView(memory, id, identityFor(res, SCOPES.read)).catch(() => undefined);
          page(res, 409, view ? renderProposalPage({ ...view, flash }, signedInView(res)) : messagePage("Not changed", flash.text, signedInView(res)));
          return;
        }
        throw err;
      }
    };
  router.post("/proposals/:id/accept", routeLabel("POST /ui/proposals/:id/accept"), ...signedIn, form, requireCsrf, decide("accept"));
  router.post("/proposals/:id/reject", routeLabel("POST /ui/proposals/:id/reject"), ...signedIn, form, requireCsrf, decide("reject"));
}

/** One proposal (GetProposal, any status) and the memories it touches. */
async function proposalView(memory: MemoryPeer, id: string, identity: CallerIdentity): Promise<ProposalDetailView> {
  const found = await getProposal(memory, id, { identity });
  const now = Date.now();
  if (found.kind === "edge") {
    const edge = found.proposal;
    const byId = new Map((await readMemories(memory, [edge.fromId, edge.toId], identity)).map((m) => [m.id, m]));
    return { kind: "edge", proposal: edge, now, ...optional("newer", byId.get(edge.fromId)), ...optional("older", byId.get(edge.toId)) };
  }
  const [source] = await readMemories(memory, [found.proposal.memoryId], identity);
  return { kind: "fact", proposal: found.proposal, now, ...optional("memory", source) };
}

function optional<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, V>);
}
