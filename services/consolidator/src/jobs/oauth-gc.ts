/**
 * OAuth garbage collection (SPEC §2): once a day, the memory service removes OAuth clients that
 * have been idle for the configured number of days (no token issued and no live refresh token),
 * authorization codes and refresh tokens past their expiry, and signing keys retired long enough
 * ago that nothing they signed can still be valid. Idempotent; a failed run simply runs again.
 */
import type { JobSchedule, RetryPolicy } from "@3ngram/queue";
import { SCOPES } from "@3ngram/rpc";
import type { Logger } from "@3ngram/runtime";
import { z } from "zod";
import { callPeer, parsePayload } from "./peer.js";
import type { ConsolidatorMemory } from "../peers.js";

export const OAUTH_GC_JOB = "oauth-gc";
export const OAUTH_GC_EVERY_MS = 24 * 60 * 60_000;
const OAUTH_GC_RETRY_POLICY: RetryPolicy = { attempts: 3, backoffMs: 60_000 };

export const OAUTH_GC_SCHEDULE: JobSchedule = { id: OAUTH_GC_JOB, name: OAUTH_GC_JOB, everyMs: OAUTH_GC_EVERY_MS, retry: OAUTH_GC_RETRY_POLICY };

const payloadSchema = z.strictObject({});

export interface OAuthGcDeps {
  memory: Pick<ConsolidatorMemory, "oauth">;
  /** Clients unused for this many days are removed. */
  oauthClientIdleDays: number;
  log: Logger;
}

export async function collectOAuthGarbage(payload: unknown, deps: OAuthGcDeps): Promise<"collected"> {
  parsePayload(OAUTH_GC_JOB, payloadSchema, payload ?? {});
  const removed = await callPeer("memory", () =>
    deps.memory.oauth.collectOAuthGarbage({ clientIdleDays: deps.oauthClientIdleDays }, { identity: { scopes: [SCOPES.internalConsolidate] } }),
  );
  deps.log.info(
    {
      clients: removed.clientsRemoved,
      codes: removed.codesRemoved,
      tokens: removed.tokensRemoved,
      keys: removed.keysRemoved,
      idle_days: deps.oauthClientIdleDays,
    },
    "oauth garbage collected",
  );
  return "collected";
}
