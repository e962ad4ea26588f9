/**
 *   GET  /ui/keys                 the person's own keys (newest first, revoked ones included)
 *   POST /ui/keys                 create one (name, read or read_write); the answer shows it once
 *   POST /ui/keys/:id/revoke      revoke one of them
 *
 * The memory service decides: it scopes every call to the session's tenant and user and refuses a
 * key with more scopes than the session holds. The new key is rendered into the POST's own answer
 * (no redirect, no-store), so it never lands in a URL, a log or the browser history.
 */
import { SCOPES } from "@3ngram/rpc";
import { createApiKeyInputSchema, parseInput } from "@3ngram/schema";
import type { Response, Router } from "express";
import { requestIdOf, routeLabel } from "../../http/locals.js";
import { identityFor } from "../../http/identity.js";
import { type UiKit, field, sessionOf } from "../kit.js";
import type { Flash } from "../layout.js";
import { renderKeysPage, type KeysPageView } from "../pages/keys.js";

const ACCESS_SCOPES = { read: [SCOPES.read], read_write: [SCOPES.read, SCOPES.write] } as const;

export function keyRoutes(router: Router, kit: UiKit): void {
  const { memory, log, page, signedInView, signedIn, form, requireCsrf } = kit;

  const show = async (res: Response, status: number, extra: Partial<KeysPageView> = {}) => {
    const identity = identityFor(res, SCOPES.read);
    const { keys } = await memory.apiKeys.listMyApiKeys({}, { identity });
    const session = sessionOf(res);
    const view: KeysPageView = { keys, now: Date.now(), ...(session.keyId ? { sessionKeyId: session.keyId } : {}), ...extra };
    page(res, status, renderKeysPage(view, signedInView(res)));
  };

  router.get("/keys", routeLabel("GET /ui/keys"), ...signedIn, async (req, res) => {
    const flash: Flash | undefined =
      field(req.query, "done") === "revoked" ? { kind: "notice", text: "Key revoked. Anything still using it is refused within 30 seconds." } : undefined;
    await show(res, 200, flash ? { flash } : {});
  });

  router.post("/keys", routeLabel("POST /ui/keys"), ...signedIn, form, requireCsrf, async (req, res) => {
    const input = parseInput(createApiKeyInputSchema, { name: field(req.body, "name"), access: field(req.body, "access") });
    const identity = identityFor(res, SCOPES.read);
    const created = await memory.apiKeys.createMyApiKey({ name: input.name, scopes: [...ACCESS_SCOPES[input.access]] }, { identity });
    log.info({ request_id: requestIdOf(res), key_id: created.key.id, access: input.access }, "api key created in the ui");
    await show(res, 201, { issued: { name: input.name, apiKey: created.apiKey }, flash: { kind: "notice", text: "Key created." } });
  });

  router.post("/keys/:id/revoke", routeLabel("POST /ui/keys/:id/revoke"), ...signedIn, form, requireCsrf, async (req, res) => {
    const identity = identityFor(res, SCOPES.read);
    const revoked = await memory.apiKeys.revokeMyApiKey({ keyId: String(req.params.id) }, { identity });
    log.info({ request_id: requestIdOf(res), key_id: revoked.key.id }, "api key revoked in the ui");
    res.set("Cache-Control", "no-store");
    res.redirect(303, "/ui/keys?done=revoked");
  });
}
