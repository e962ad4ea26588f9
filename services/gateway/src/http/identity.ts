import { AppError } from "@3ngram/errors";
import type { CallerIdentity, Scope } from "@3ngram/rpc";
import type { Response } from "express";
import { principalOf } from "./locals.js";
import { WWW_AUTHENTICATE } from "../rest/errors.js";

/** The identity a REST route calls the services with, after checking it holds `scope` (fail closed). */
export function identityFor(res: Response, scope: Scope): CallerIdentity {
  const principal = principalOf(res);
  if (principal === undefined) throw new AppError("unauthenticated", "no verified principal");
  if (!principal.scopes.includes(scope)) {
    // RFC 6750 §3.1: tell the client which scope would have worked.
    res.set("WWW-Authenticate", `${WWW_AUTHENTICATE}, error="insufficient_scope", scope="${scope}"`);
    throw new AppError("insufficient_scope", `${scope} required`);
  }
  return { tenantId: principal.tenantId, userId: principal.userId, scopes: principal.scopes, actor: "user_api" };
}
