/**
 * What each layer counts against. The keys end up in Redis, so none of them holds a secret: an
 * API key is counted by its id (or a SHA-256 of it when no id is known), never by the key itself.
 */
import { createHash } from "node:crypto";
import { isIP } from "node:net";
// CommonJS: the default import is what Node's ESM loader gives at run time (see oauth/cimd/address-policy.ts).
import ipaddr from "ipaddr.js";
import type { Credential, Principal } from "../http/locals.js";

/** The per-credential budget's key. One function, so every credential kind is counted the same way. */
export function credentialLimitKey(credential: Credential): string {
  switch (credential.kind) {
    case "api_key":
      return `api_key:${credential.keyId}`;
    case "oauth_grant":
      return `oauth:${credential.grant}`;
  }
}

/** An access token's credential: its client's grant for this user (client ids can be long URLs, so digested). */
export function accessTokenCredential(clientId: string, principal: Pick<Principal, "tenantId" | "userId">): Credential {
  const client = createHash("sha256").update(clientId).digest("hex").slice(0, 32);
  return { kind: "oauth_grant", grant: `${principal.tenantId}:${principal.userId}:${client}` };
}

/** An API key's credential: its id from the memory service, or a digest of the presented key when no id came back. */
export function apiKeyCredential(presentedKey: string, keyId: string | undefined): Credential {
  return { kind: "api_key", keyId: keyId || `sha256-${createHash("sha256").update(presentedKey).digest("hex")}` };
}

/** Users are only unique within a tenant. */
export function userLimitKey(principal: Pick<Principal, "tenantId" | "userId">): string {
  return `${principal.tenantId}:${principal.userId}`;
}

/**
 * The per-IP key. An IPv4-mapped address counts as its IPv4 address; any other IPv6 address counts
 * by its /64, since one host is usually handed a whole /64 and could otherwise rotate through it.
 */
export function clientIpLimitKey(ip: string | undefined): string {
  // node:net decides what is an address (ipaddr.js also takes legacy forms such as "127.1").
  if (ip === undefined) return "unknown";
  // The common case, a dotted quad, is already what ipaddr.js would print (node:net takes no leading zeros or short forms).
  if (isIP(ip) === 4) return ip;
  if (isIP(ip.split("%")[0]!) === 0) return "unknown";
  const address = ipaddr.process(ip);
  if (address.kind() === "ipv4") return address.toString();
  return `${(address as ipaddr.IPv6).parts
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(":")}::/64`;
}
