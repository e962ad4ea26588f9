/**
 * /ui: the web UI for the people around the agents. A person signs in with one of their API keys
 * and can then look at what the agents remember (overview, search, a memory and its history,
 * facts over time), decide what background work proposes, and manage their own keys. Every page
 * calls the same RPCs as the MCP tools and REST routes; nothing here decides anything
 * (docs/web-ui.md).
 *
 *   GET  /ui/                          → /ui/overview
 *   GET  /ui/style.css                 the one stylesheet
 *   GET  /ui/sign-in, POST /ui/sign-in    paste an API key; sets the session cookie
 *   POST /ui/sign-out                  clears it
 *   routes/browse.ts                   overview, search, memories/:id, facts
 *   routes/proposals.ts                the review queue and its decisions
 *   routes/keys.ts                     the person's own API keys
 *
 * Every POST carries a CSRF token: before sign-in a double-submit cookie, after it a token bound to
 * the session (session.ts). Pages set the shared HTML security headers (../http/html-page.ts):
 * no script at all, one stylesheet from this origin.
 */
import { randomBytes } from "node:crypto";
import { AppError, REASONS, isAppError, toAppError } from "@3ngram/errors";
import { SCOPES } from "@3ngram/rpc";
import type { Logger } from "@3ngram/runtime";
import express, { Router, type ErrorRequestHandler, type RequestHandler, type Response } from "express";
import type { ApiKeyResolver } from "../auth/api-key.js";
import type { MemoryClient } from "../clients/memory.js";
import type { SearchClient } from "../clients/search.js";
import { cookieValue, sameToken } from "../http/cookies.js";
import { setPageHeaders } from "../http/html-page.js";
import { requestIdOf, routeLabel } from "../http/locals.js";
import { requestFault } from "../http/request-faults.js";
import { logError } from "../rest/errors.js";
import { type UiKit, field, sessionOf } from "./kit.js";
import { messagePage, type Flash, type SignedIn } from "./layout.js";
import { renderSignInPage } from "./pages/sign-in.js";
import { browseRoutes } from "./routes/browse.js";
import { keyRoutes } from "./routes/keys.js";
import { proposalRoutes } from "./routes/proposals.js";
import { SESSION_COOKIE, SESSION_TTL_SECONDS, type SessionCodec } from "./session.js";
import { STYLESHEET } from "./stylesheet.js";

const SIGN_IN_CSRF_COOKIE = "ui_csrf";
const SIGN_IN_CSRF_TTL_SECONDS = 600;
const COOKIE_PATH = "/ui";
const MAX_FORM_BYTES = 16 * 1024;
/** Where a signed-in person lands. */
const HOME = "/ui/overview";

export interface ReviewUiDeps {
  memory: MemoryClient;
  search: SearchClient;
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
  const { sessions, log } = deps;
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: MAX_FORM_BYTES, parameterLimit: 20 });
  const cookieOptions = (maxAgeSeconds: number) => ({
    httpOnly: true,
    sameSite: "strict" as const,
    secure: deps.secureCookies(),
    path: COOKIE_PATH,
    maxAge: maxAgeSeconds * 1000,
  });

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
  const redirect = (res: Response, to: string) => {
    res.set("Cache-Control", "no-store");
    res.redirect(303, to);
  };

  /** The signed-in session, or a trip to the sign-in page. Sets the principal the per-user budgets count. */
  const requireSession: RequestHandler = async (req, res, next) => {
    const session = await sessions.verify(cookieValue(req, SESSION_COOKIE));
    if (session === undefined) {
      redirect(res, "/ui/sign-in");
      return;
    }
    res.locals.uiSession = session;
    res.locals.principal = { tenantId: session.tenantId, userId: session.userId, scopes: session.scopes, expiresAt: session.expiresAt };
    if (session.keyId !== undefined) res.locals.credential = { kind: "api_key", keyId: session.keyId };
    next();
  };

  /** A state-changing form of a signed-in page: the session's CSRF token must come back with it. */
  const requireCsrf: RequestHandler = (req, res, next) => {
    if (!sameToken(sessions.csrfToken(sessionOf(res)), field(req.body, "csrf_token") || undefined)) {
      log.warn({ request_id: requestIdOf(res), reason: "csrf" }, "form refused");
      page(
        res,
        403,
        messagePage("Form expired", "This form was not sent from a page of this session. Nothing was changed; please try again.", signedInView(res)),
      );
      return;
    }
    next();
  };

  // The session and its budgets come before any form body is read.
  const kit: UiKit = {
    memory: deps.memory,
    search: deps.search,
    log,
    page,
    signedInView,
    signedIn: [requireSession, ...deps.signedInLimits],
    form,
    requireCsrf,
  };

  router.get("/style.css", routeLabel("GET /ui/style.css"), (_req, res) => {
    res.set({ "X-Content-Type-Options": "nosniff", "Cache-Control": "public, max-age=3600" }).type("css").send(STYLESHEET);
  });

  router.get("/", routeLabel("GET /ui/"), (_req, res) => {
    res.set("Cache-Control", "no-store");
    res.redirect(302, HOME);
  });

  router.get("/sign-in", routeLabel("GET /ui/sign-in"), async (req, res) => {
    if ((await sessions.verify(cookieValue(req, SESSION_COOKIE))) !== undefined) {
      redirect(res, HOME);
      return;
    }
    showSignIn(res, 200);
  });

  router.post("/sign-in", routeLabel("POST /ui/sign-in"), form, async (req, res) => {
    if (!sameToken(cookieValue(req, SIGN_IN_CSRF_COOKIE), field(req.body, "csrf_token") || undefined)) {
      log.warn({ request_id: requestIdOf(res), reason: "csrf" }, "sign-in refused");
      showSignIn(res, 403, { kind: "problem", text: "This form expired or was not sent from this page. Please try again." });
      return;
    }
    let principal;
    try {
      principal = await deps.resolveApiKey(field(req.body, "api_key").trim());
    } catch (err) {
      if (isAppError(err) && err.reason === "unauthenticated") {
        log.warn({ request_id: requestIdOf(res), reason: "unauthenticated" }, "sign-in refused");
        showSignIn(res, 401, { kind: "problem", text: "That API key was not accepted." });
        return;
      }
      throw err;
    }
    if (!principal.scopes.includes(SCOPES.read)) {
      showSignIn(res, 403, { kind: "problem", text: "That API key cannot read memories, so it cannot sign in here." });
      return;
    }
    const { token } = await sessions.issue(principal);
    log.info({ request_id: requestIdOf(res), tenant_id: principal.tenantId, scopes: principal.scopes }, "ui session started");
    res.clearCookie(SIGN_IN_CSRF_COOKIE, { path: COOKIE_PATH });
    res.cookie(SESSION_COOKIE, token, cookieOptions(SESSION_TTL_SECONDS));
    redirect(res, HOME);
  });

  router.post("/sign-out", routeLabel("POST /ui/sign-out"), ...kit.signedIn, form, requireCsrf, (_req, res) => {
    res.clearCookie(SESSION_COOKIE, { path: COOKIE_PATH });
    redirect(res, "/ui/sign-in");
  });

  browseRoutes(router, kit);
  proposalRoutes(router, kit);
  keyRoutes(router, kit);

  router.use(() => {
    throw new AppError("not_found", "no such page");
  });
  router.use(pageErrors(log, page, (res) => (res.locals.uiSession ? signedInView(res) : undefined)));
  return router;
}

const TITLES: Partial<Record<string, string>> = {
  invalid_input: "Not understood",
  not_found: "Not found",
  insufficient_scope: "Not allowed",
  conflict: "Not changed",
  rate_limited: "Slow down",
  unavailable: "Temporarily unavailable",
};

/** Errors as HTML pages with the reason table's status; our own failures are described only in the logs. */
function pageErrors(
  log: Logger,
  page: (res: Response, status: number, html: string) => void,
  signedIn: (res: Response) => SignedIn | undefined,
): ErrorRequestHandler {
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
    page(res, fault?.status ?? REASONS[reason].http, messagePage(TITLES[reason] ?? "Something went wrong", text, signedIn(res)));
  };
}
