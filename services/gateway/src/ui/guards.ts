/** The two guards of a signed-in page: a session (or a trip to sign-in), and a form's CSRF token. */
import type { Logger } from "@3ngram/runtime";
import type { RequestHandler, Response } from "express";
import { cookieValue, sameToken } from "../http/cookies.js";
import { requestIdOf } from "../http/locals.js";
import { field, redirect, sessionOf } from "./kit.js";
import { messagePage, type SignedIn } from "./layout.js";
import { SESSION_COOKIE, type SessionCodec } from "./session.js";

export function sessionGuards(deps: {
  sessions: SessionCodec;
  log: Logger;
  page: (res: Response, status: number, html: string) => void;
  signedInView: (res: Response) => SignedIn;
}): { requireSession: RequestHandler; requireCsrf: RequestHandler } {
  const { sessions, log, page, signedInView } = deps;
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

  return { requireSession, requireCsrf };
}
