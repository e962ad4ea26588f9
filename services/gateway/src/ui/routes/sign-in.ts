/**
 * Signing in and out: a person pastes one of their API keys (a double-submit cookie guards the
 * form, since there is no session yet), gets the session cookie, and can clear it again.
 */
import { randomBytes } from "node:crypto";
import { isAppError } from "@3ngram/errors";
import { SCOPES } from "@3ngram/rpc";
import type { CookieOptions, Response, Router } from "express";
import type { ApiKeyResolver } from "../../auth/api-key.js";
import { cookieValue, sameToken } from "../../http/cookies.js";
import { requestIdOf, routeLabel } from "../../http/locals.js";
import { UI_COOKIE_PATH, UI_HOME, field, redirect, type UiKit } from "../kit.js";
import type { Flash } from "../layout.js";
import { renderSignInPage } from "../pages/sign-in.js";
import { SESSION_COOKIE, SESSION_TTL_SECONDS, type SessionCodec } from "../session.js";

const SIGN_IN_CSRF_COOKIE = "ui_csrf";
const SIGN_IN_CSRF_TTL_SECONDS = 600;

export function signInRoutes(
  router: Router,
  kit: UiKit,
  deps: { sessions: SessionCodec; resolveApiKey: ApiKeyResolver; cookieOptions: (maxAgeSeconds: number) => CookieOptions },
): void {
  const { page, log, form, requireCsrf } = kit;
  const { sessions, cookieOptions } = deps;
  const showSignIn = (res: Response, status: number, flash?: Flash) => {
    const csrfToken = randomBytes(32).toString("base64url");
    res.cookie(SIGN_IN_CSRF_COOKIE, csrfToken, cookieOptions(SIGN_IN_CSRF_TTL_SECONDS));
    page(res, status, renderSignInPage({ csrfToken, ...(flash ? { flash } : {}) }));
  };
  router.get("/sign-in", routeLabel("GET /ui/sign-in"), async (req, res) => {
    if ((await sessions.verify(cookieValue(req, SESSION_COOKIE))) !== undefined) {
      redirect(res, UI_HOME);
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
      // Fresh: a session lives for hours, so a key revoked seconds ago must not start one.
      principal = await deps.resolveApiKey(field(req.body, "api_key").trim(), { fresh: true });
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
    res.clearCookie(SIGN_IN_CSRF_COOKIE, { path: UI_COOKIE_PATH });
    res.cookie(SESSION_COOKIE, token, cookieOptions(SESSION_TTL_SECONDS));
    redirect(res, UI_HOME);
  });

  router.post("/sign-out", routeLabel("POST /ui/sign-out"), ...kit.signedIn, form, requireCsrf, (_req, res) => {
    res.clearCookie(SESSION_COOKIE, { path: UI_COOKIE_PATH });
    redirect(res, "/ui/sign-in");
  });
}
