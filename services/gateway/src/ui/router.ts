/**
 * /ui: the web UI for the people around the agents. A person signs in with one of their API keys
 * and can then look at what the agents remember (overview, search, a memory and its history,
 * facts over time), decide what background work proposes, and manage their own keys. Every page
 * calls the same RPCs as the MCP tools and REST routes; nothing here decides anything
 * (docs/web-ui.md).
 *
 *   GET  /ui/                          → /ui/overview
 *   GET  /ui/style.css                 the one stylesheet
 *   routes/sign-in.ts                  GET and POST /ui/sign-in (paste an API key; sets the session
 *                                      cookie), POST /ui/sign-out (clears it)
 *   routes/browse.ts                   overview, search, memories/:id, facts
 *   routes/proposals.ts                the review queue and its decisions
 *   routes/keys.ts                     the person's own API keys
 *
 * Every POST carries a CSRF token: before sign-in a double-submit cookie, after it a token bound to
 * the session (session.ts, guards.ts). A failed request is a page too (page-errors.ts). Pages set the shared HTML security headers (../http/html-page.ts):
 * no script at all, one stylesheet from this origin.
 */
import { AppError } from "@3ngram/errors";
import { SCOPES } from "@3ngram/rpc";
import type { Logger } from "@3ngram/runtime";
import express, { Router, type RequestHandler, type Response } from "express";
import type { ApiKeyResolver } from "../auth/api-key.js";
import type { MemoryPeer } from "../clients/memory.js";
import type { SearchPeer } from "../clients/search.js";
import { setPageHeaders } from "../http/html-page.js";
import { routeLabel } from "../http/locals.js";
import { sessionGuards } from "./guards.js";
import { UI_COOKIE_PATH, UI_FORM_BYTES, UI_HOME, sessionOf, type UiKit } from "./kit.js";
import type { SignedIn } from "./layout.js";
import { pageErrors } from "./page-errors.js";
import { browseRoutes } from "./routes/browse.js";
import { keyRoutes } from "./routes/keys.js";
import { proposalRoutes } from "./routes/proposals.js";
import { signInRoutes } from "./routes/sign-in.js";
import type { SessionCodec } from "./session.js";
import { STYLESHEET } from "./stylesheet.js";

export interface ReviewUiDeps {
  memory: MemoryPeer;
  search: SearchPeer;
  resolveApiKey: ApiKeyResolver;
  sessions: SessionCodec;
  /** Whether cookies get the Secure attribute (the gateway is reached over https). */
  secureCookies: () => boolean;
  /** The budgets spent once the session is known (per credential, per user); it reads res.locals.principal. */
  signedInLimit: RequestHandler;
  log: Logger;
}

/** Mounted at /ui. */
export function reviewUi(deps: ReviewUiDeps): Router {
  const { sessions, log } = deps;
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: UI_FORM_BYTES, parameterLimit: 20 });
  const cookieOptions = (maxAgeSeconds: number) => ({
    httpOnly: true,
    sameSite: "strict" as const,
    secure: deps.secureCookies(),
    path: UI_COOKIE_PATH,
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

  const { requireSession, requireCsrf } = sessionGuards({ sessions, log, page, signedInView });

  // The session and its budgets come before any form body is read.
  const kit: UiKit = {
    memory: deps.memory,
    search: deps.search,
    log,
    page,
    signedInView,
    signedIn: [requireSession, deps.signedInLimit],
    form,
    requireCsrf,
  };

  router.get("/style.css", routeLabel("GET /ui/style.css"), (_req, res) => {
    res.set({ "X-Content-Type-Options": "nosniff", "Cache-Control": "public, max-age=3600" }).type("css").send(STYLESHEET);
  });

  router.get("/", routeLabel("GET /ui/"), (_req, res) => {
    res.set("Cache-Control", "no-store");
    res.redirect(302, UI_HOME);
  });

  signInRoutes(router, kit, { sessions, resolveApiKey: deps.resolveApiKey, cookieOptions });

  browseRoutes(router, kit);
  proposalRoutes(router, kit);
  keyRoutes(router, kit);

  router.use(() => {
    throw new AppError("not_found", "no such page");
  });
  router.use(pageErrors(log, page, (res) => (res.locals.uiSession ? signedInView(res) : undefined)));
  return router;
}
