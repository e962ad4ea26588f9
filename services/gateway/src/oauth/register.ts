/**
 * RFC 7591 Dynamic Client Registration. The body is validated with the shared client-metadata
 * schema (the same one metadata documents use); a bad field answers 400 invalid_client_metadata
 * (invalid_redirect_uri for redirect_uris) naming the field. The secret of a confidential client
 * is returned once and never logged.
 */
import type { Logger } from "@3ngram/runtime";
import { issuePath } from "@3ngram/errors";
import { SCOPES } from "@3ngram/rpc";
import { oauthClientMetadataSchema } from "@3ngram/schema";
import express, { Router, type ErrorRequestHandler } from "express";
import type { MemoryPeer } from "../clients/memory.js";
import { routeLabel } from "../http/locals.js";
import { OAuthError, sendOAuthError } from "./errors.js";

const MAX_REGISTRATION_BYTES = 16 * 1024;

export function registrationRouter(memory: MemoryPeer, log: Logger): Router {
  const router = Router();
  router.post("/oauth/register", routeLabel("POST /oauth/register"), express.json({ limit: MAX_REGISTRATION_BYTES }), async (req, res) => {
    try {
      if (!req.is("application/json") || req.body === null || typeof req.body !== "object" || Array.isArray(req.body)) {
        throw new OAuthError("invalid_client_metadata", "the body must be a JSON object");
      }
      const parsed = oauthClientMetadataSchema.safeParse(req.body);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        const field = issuePath(issue) || "body";
        const code = field.startsWith("redirect_uris") ? "invalid_redirect_uri" : "invalid_client_metadata";
        throw new OAuthError(code, `${field}: ${issue.message}`);
      }
      const { client, clientSecret } = await memory.oauth.registerOAuthClient(
        { metadataJson: JSON.stringify(parsed.data) },
        { identity: { scopes: [SCOPES.internalAuth] } },
      );
      log.info({ client_id: client.clientId, auth_method: client.tokenEndpointAuthMethod }, "oauth client registered");
      res.set({ "Cache-Control": "no-store", Pragma: "no-cache" });
      res.status(201).json({
        ...parsed.data,
        client_id: client.clientId,
        client_id_issued_at: Math.floor(Date.parse(client.createdAt) / 1000),
        ...(clientSecret !== undefined ? { client_secret: clientSecret, client_secret_expires_at: 0 } : {}),
      });
    } catch (err) {
      sendOAuthError(res, err, log);
    }
  });
  // A malformed or oversized body is still answered in RFC 7591 form, not the REST envelope.
  router.use("/oauth/register", ((err, _req, res, next) => {
    if (res.headersSent) return next(err);
    sendOAuthError(res, new OAuthError("invalid_client_metadata", "the body must be a JSON object of at most 16 KiB"), log);
  }) as ErrorRequestHandler);
  return router;
}
