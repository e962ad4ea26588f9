/**
 * /ui: the review web UI. A person signs in with one of their API keys, reads the pending
 * proposals of both kinds, compares each with the memories it touches, and accepts or rejects it.
 * The pages call the same memory-service RPCs as review_proposals and /api/v1/proposals; nothing
 * here decides anything (docs/web-ui.md).
 *
 *   GET  /ui/                         → /ui/proposals
 *   GET  /ui/style.css                the one stylesheet
 *   GET  /ui/sign-in, POST /ui/sign-in   paste an API key; sets the session cookie
 *   POST /ui/sign-out                 clears it
 *   GET  /ui/proposals?status=&limit=    the list (memory:read), newest first, `limit` of each kind
 *   GET  /ui/proposals/:id            one proposal (any status) beside the memories it touches
 *   POST /ui/proposals/:id/accept     (memory:write)
 *   POST /ui/proposals/:id/reject     optional rationale (memory:write)
 *   GET  /ui/memories/:id             one memory, read-only
 *
 * Every POST carries a CSRF token: before sign-in a double-submit cookie, after it a token bound to
 * the session (session.ts). Pages set the shared HTML security headers (../http/html-page.ts).
 */
import { randomBytes } from "node:crypto";
import { AppError, REASONS, isAppError, toAppError } from "@3ngram/errors";
import { SCOPES, type CallerIdentity } from "@3ngram/rpc";
import type { Logger } from "@3ngram/runtime";
import {
  MAX_PROPOSALS_LIMIT,
  getMemoriesInputSchema,
  listProposalsQuerySchema,
  memoryIdSchema,
  parseInput,
  rejectProposalBodySchema,
  type MemoryRecord,
} from "@3ngram/schema";
import express, { Router, type ErrorRequestHandler, type RequestHandler, type Response } from "express";
import type { ApiKeyResolver } from "../auth/api-key.js";
import type { MemoryClient } from "../clients/memory.js";
import { toGetMemoriesOutput, toGetMemoriesRequest } from "../clients/memory.js";
import { proposalIdFromPath, reviewProposals, toProposalRecord } from "../clients/proposals.js";
import { identityFor } from "../http/identity.js";
import { cookieValue, sameToken } from "../http/cookies.js";
import { setPageHeaders } from "../http/html-page.js";
import { requestIdOf, routeLabel } from "../http/locals.js";
import { requestFault } from "../http/request-faults.js";
import { logError } from "../rest/errors.js";
import {
  renderMemoryPage,
  renderMessagePage,
  renderProposalListPage,
  renderProposalPage,
  renderSignInPage,
  type Flash,
  type ProposalDetailView,
  type SignedIn,
} from "./pages.js";
import { SESSION_COOKIE, SESSION_TTL_SECONDS, type SessionCodec, type UiSession } from "./session.js";
import { STYLESHEET } from "./stylesheet.js";

const SIGN_IN_CSRF_COOKIE = "ui_csrf";
const SIGN_IN_CSRF_TTL_SECONDS = 600;
const COOKIE_PATH = "/ui";
const MAX_FORM_BYTES = 16 * 1024;
const DONE_TEXT: Record<string, string> = { applied: "Proposal accepted.", rejected: "Proposal rejected." };

export interface ReviewUiDeps {
  memory: MemoryClient;
  resolveApiKey: ApiKeyResolver;
  sessions: SessionCodec;
  /** Whether cookies get the Secure attribute (the gateway is reached over https). */
  secureCookies: () => boolean;
  /** Budgets spent after the session is known (per credential, per user); they read res.locals.principal. */
  signedInLimits: RequestHandler[];
  log: Logger;
}

/** Mounted at /ui. */
export function reviewUi(deps: ReviewUiDeps): Router {
  const { memory, sessions, log } = deps;
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: MAX_FORM_BYTES, parameterLimit: 20 });
  const cookieOptions = (maxAgeSeconds: number) => ({ httpOnly: true, sameSite: "strict" as const, secure: deps.secureCookies(), path: COOKIE_PATH, maxAge: maxAgeSeconds * 1000 });

  const page = (res: Response, status: number, html: string) => {
    setPageHeaders(res, { selfStyles: true });
    res.status(status).type("html").send(html);
  };
  const signedInView = (res: Response): SignedIn => {
    const session = sessionOf(res);
    return { csrfToken: sessions.csrfToken(session), canWrite: session.scopes.includes(SCOPES.write) };
  };
  const showSignIn = (res: Response, status: number, flash?: Flash) => {
    const csrfToken = randomBytes(32).toString("base64url");
    res.cookie(SIGN_IN_CSRF_COOKIE, csrfToken, cookieOptions(SIGN_IN_CSRF_TTL_SECONDS));
    page(res, status, renderSignInPage({ csrfToken, ...(flash ? { flash } : {}) }));
  };
  const toSignIn = (res: Response) => {
    res.set("Cache-Control", "no-store");
    res.redirect(303, "/ui/sign-in");
  };

  /** The signed-in session, or a trip to the sign-in page. Sets the principal the per-user budgets count. */
  const requireSession: RequestHandler = async (req, res, next) => {
    const session = await sessions.verify(cookieValue(req, SESSION_COOKIE));
    if (session === undefined) {
      toSignIn(res);
      return;
    }
    res.locals.uiSession = session;
    res.locals.principal = { tenantId: session.tenantId, userId: session.userId, scopes: session.scopes, expiresAt: session.expiresAt };
    if (session.keyId !== undefined) res.locals.credential = { kind: "api_key", keyId: session.keyId };
    next();
  };
  // The session and its budgets come before any form body is read.
  const signedIn = [requireSession, ...deps.signedInLimits];

  /** A state-changing form of a signed-in page: the session's CSRF token must come back with it. */
  const requireCsrf: RequestHandler = (req, res, next) => {
    const sent = (req.body as Record<string, unknown> | undefined)?.csrf_token;
    if (!sameToken(sessions.csrfToken(sessionOf(res)), typeof sent === "string" ? sent : undefined)) {
      log.warn({ request_id: requestIdOf(res), reason: "csrf" }, "form refused");
      page(res, 403, renderMessagePage("Form expired", "This form was not sent from a page of this session. Nothing was changed; please try again.", signedInView(res)));
      return;
    }
    next();
  };

  router.get("/style.css", routeLabel("GET /ui/style.css"), (_req, res) => {
    res.set({ "X-Content-Type-Options": "nosniff", "Cache-Control": "public, max-age=3600" }).type("css").send(STYLESHEET);
  });

  router.get("/", routeLabel("GET /ui/"), (_req, res) => {
    res.set("Cache-Control", "no-store");
    res.redirect(302, "/ui/proposals");
  });

  router.get("/sign-in", routeLabel("GET /ui/sign-in"), async (req, res) => {
    if ((await sessions.verify(cookieValue(req, SESSION_COOKIE))) !== undefined) {
      res.set("Cache-Control", "no-store");
      res.redirect(303, "/ui/proposals");
      return;
    }
    showSignIn(res, 200);
  });

  router.post("/sign-in", routeLabel("POST /ui/sign-in"), form, async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (!sameToken(cookieValue(req, SIGN_IN_CSRF_COOKIE), typeof body.csrf_token === "string" ? body.csrf_token : undefined)) {
      log.warn({ request_id: requestIdOf(res), reason: "csrf" }, "sign-in refused");
      showSignIn(res, 403, { kind: "problem", text: "This form expired or was not sent from this page. Please try again." });
      return;
    }
    let principal;
    try {
      principal = await deps.resolveApiKey(typeof body.api_key === "string" ? body.api_key.trim() : "");
    } catch (err) {
      if (isAppError(err) && err.reason === "unauthenticated") {
        log.warn({ request_id: requestIdOf(res), reason: "unauthenticated" }, "sign-in refused");
        showSignIn(res, 401, { kind: "problem", text: "That API key was not accepted." });
        return;
      }
      throw err;
    }
    if (!principal.scopes.includes(SCOPES.read)) {
      showSignIn(res, 403, { kind: "problem", text: "That API key cannot read memories, so it cannot review proposals." });
      return;
    }
    const { token } = await sessions.issue(principal);
    log.info({ request_id: requestIdOf(res), tenant_id: principal.tenantId, scopes: principal.scopes }, "ui session started");
    res.clearCookie(SIGN_IN_CSRF_COOKIE, { path: COOKIE_PATH });
    res.cookie(SESSION_COOKIE, token, cookieOptions(SESSION_TTL_SECONDS));
    res.set("Cache-Control", "no-store");
    res.redirect(303, "/ui/proposals");
  });

  router.post("/sign-out", routeLabel("POST /ui/sign-out"), ...signedIn, form, requireCsrf, (_req, res) => {
    res.clearCookie(SESSION_COOKIE, { path: COOKIE_PATH });
    toSignIn(res);
  });

  router.get("/proposals", routeLabel("GET /ui/proposals"), ...signedIn, async (req, res) => {
    const identity = identityFor(res, SCOPES.read);
    const raw = req.query as Record<string, unknown>;
    const query = parseInput(listProposalsQuerySchema, { ...(raw.status !== undefined ? { status: raw.status } : {}), ...(raw.limit !== undefined ? { limit: raw.limit } : {}) });
    const list = await reviewProposals(memory, { action: "list", ...query }, { identity });
    const edges = list.proposals ?? [];
    const facts = list.factProposals ?? [];
    const full = edges.length >= query.limit || facts.length >= query.limit;
    const done = typeof raw.done === "string" && Object.hasOwn(DONE_TEXT, raw.done) ? DONE_TEXT[raw.done] : undefined;
    page(
      res,
      200,
      renderProposalListPage(
        {
          ...query,
          edges,
          facts,
          ...(full && query.limit < MAX_PROPOSALS_LIMIT ? { moreLimit: Math.min(query.limit * 2, MAX_PROPOSALS_LIMIT) } : {}),
          ...(done ? { flash: { kind: "notice", text: done } } : {}),
        },
        signedInView(res),
      ),
    );
  });

  router.get("/proposals/:id", routeLabel("GET /ui/proposals/:id"), ...signedIn, async (req, res) => {
    const identity = identityFor(res, SCOPES.read);
    const view = await proposalView(memory, proposalIdFromPath(req.params.id), identity);
    page(res, 200, renderProposalPage(view, signedInView(res)));
  });

  const decide = (action: "accept" | "reject"): RequestHandler => async (req, res) => {
    const session = sessionOf(res);
    if (!session.scopes.includes(SCOPES.write)) {
      log.warn({ request_id: requestIdOf(res), reason: "insufficient_scope" }, "decision refused");
      page(res, 403, renderMessagePage("Not allowed", "Your API key can read but not write, so it cannot accept or reject proposals.", signedInView(res)));
      return;
    }
    const identity = identityFor(res, SCOPES.write);
    const id = proposalIdFromPath(req.params.id);
    const body = req.body as Record<string, unknown>;
    const rationale = typeof body.rationale === "string" && body.rationale.trim() !== "" ? body.rationale : undefined;
    const input =
      action === "accept"
        ? ({ action, proposalId: id } as const)
        : ({ action, proposalId: id, ...parseInput(rejectProposalBodySchema, rationale === undefined ? {} : { rationale }) } as const);
    try {
      const outcome = await reviewProposals(memory, input, { identity });
      log.info({ request_id: requestIdOf(res), tenant_id: session.tenantId, proposal_id: id, action: outcome.action }, "proposal decided in the ui");
      res.set("Cache-Control", "no-store");
      res.redirect(303, `/ui/proposals?done=${action === "accept" ? "applied" : "rejected"}`);
    } catch (err) {
      // Already decided, or no longer applicable: say so on the proposal's own page.
      if (isAppError(err) && (err.reason === "conflict" || err.reason === "invalid_transition")) {
        logError(log, err, err, requestIdOf(res));
        const flash: Flash = { kind: "problem", text: `This proposal could not be ${action === "accept" ? "accepted" : "rejected"}: ${err.message}` };
        const view = await proposalView(memory, id, identityFor(res, SCOPES.read)).catch(() => undefined);
        page(res, 409, view ? renderProposalPage({ ...view, flash }, signedInView(res)) : renderMessagePage("Not changed", flash.text, signedInView(res)));
        return;
      }
      throw err;
    }
  };
  router.post("/proposals/:id/accept", routeLabel("POST /ui/proposals/:id/accept"), ...signedIn, form, requireCsrf, decide("accept"));
  router.post("/proposals/:id/reject", routeLabel("POST /ui/proposals/:id/reject"), ...signedIn, form, requireCsrf, decide("reject"));

  router.get("/memories/:id", routeLabel("GET /ui/memories/:id"), ...signedIn, async (req, res) => {
    const identity = identityFor(res, SCOPES.read);
    const id = memoryIdSchema.safeParse(req.params.id);
    if (!id.success) throw new AppError("not_found", "memory not found");
    const [found] = await readMemories(memory, [id.data.toLowerCase()], identity);
    if (found === undefined) throw new AppError("not_found", "memory not found");
    page(res, 200, renderMemoryPage(found, signedInView(res)));
  });

  router.use(() => {
    throw new AppError("not_found", "no such page");
  });
  router.use(pageErrors(log, page, (res) => (res.locals.uiSession ? signedInView(res) : undefined)));
  return router;
}

function sessionOf(res: Response): UiSession {
  const session = res.locals.uiSession as UiSession | undefined;
  if (session === undefined) throw new AppError("unauthenticated", "no session");
  return session;
}


async function readMemories(memory: MemoryClient, ids: string[], identity: CallerIdentity): Promise<MemoryRecord[]> {
  const input = parseInput(getMemoriesInputSchema, { ids: [...new Set(ids)] });
  return toGetMemoriesOutput(await memory.getMemories(toGetMemoriesRequest(input), { identity })).memories;
}

/** One proposal (GetProposal, any status) and the memories it touches. */
async function proposalView(memory: MemoryClient, id: string, identity: CallerIdentity): Promise<ProposalDetailView> {
  const found = toProposalRecord(await memory.getProposal({ proposalId: id }, { identity }));
  if (found.kind === "edge") {
    const edge = found.proposal;
    const byId = new Map((await readMemories(memory, [edge.fromId, edge.toId], identity)).map((m) => [m.id, m]));
    return { kind: "edge", proposal: edge, ...optional("newer", byId.get(edge.fromId)), ...optional("older", byId.get(edge.toId)) };
  }
  const [source] = await readMemories(memory, [found.proposal.memoryId], identity);
  return { kind: "fact", proposal: found.proposal, ...optional("memory", source) };
}

function optional<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, V>);
}

const TITLES: Partial<Record<string, string>> = {
  invalid_input: "Not understood",
  not_found: "Not found",
  insufficient_scope: "Not allowed",
  rate_limited: "Slow down",
  unavailable: "Temporarily unavailable",
};

/** Errors as HTML pages with the reason table's status; our own failures are described only in the logs. */
function pageErrors(log: Logger, page: (res: Response, status: number, html: string) => void, signedIn: (res: Response) => SignedIn | undefined): ErrorRequestHandler {
  return (err, _req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const fault = requestFault(err, { maxBodyBytes: MAX_FORM_BYTES });
    const appError = fault === undefined ? toAppError(err) : new AppError(fault.reason, fault.reason === "not_found" ? "no such page" : "unreadable form");
    logError(log, err, appError, requestIdOf(res));
    const { reason } = appError;
    const text =
      reason === "internal_error"
        ? `Something went wrong on our side (request ${requestIdOf(res)}).`
        : reason === "unavailable"
          ? "The memory service cannot be reached right now. Please try again shortly."
          : appError.details.field
            ? `${appError.message} (${appError.details.field})`
            : appError.message;
    page(res, fault?.status ?? REASONS[reason].http, renderMessagePage(TITLES[reason] ?? "Something went wrong", text, signedIn(res)));
  };
}
