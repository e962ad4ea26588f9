import { z } from "zod";
import { storableText } from "./storable-text.js";

/**
 * OAuth client metadata (RFC 7591 §2), the one shape behind both ways a client introduces itself:
 * a Dynamic Client Registration request body and a Client ID Metadata Document fetched from the
 * client's https client_id. Unknown members are dropped (both specs say to ignore them), and
 * every list and string is bounded because the document comes from an untrusted party.
 */
const MAX_REDIRECT_URIS = 10;
export const MAX_CLIENT_METADATA_URL_LENGTH = 2048;
const MAX_CLIENT_NAME_LENGTH = 200;
/** A Client ID Metadata Document larger than this is refused unread. */
export const MAX_CLIENT_METADATA_DOCUMENT_BYTES = 5 * 1024;

export const TOKEN_ENDPOINT_AUTH_METHODS = ["none", "client_secret_basic", "client_secret_post"] as const;
export const OAUTH_GRANT_TYPES = ["authorization_code", "refresh_token"] as const;

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * Where an authorization response may be sent (OAuth 2.1 §2.3 and RFC 8252): an https URL, an http
 * URL on a loopback host (native apps listen there; any port), or a private-use scheme in
 * reverse-DNS form (`com.example.app:/callback`). Never a fragment, never credentials in the URL.
 */
export function isAcceptableRedirectUri(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.hash !== "" || value.includes("#") || url.username !== "" || url.password !== "") return false;
  if (url.protocol === "https:") return url.hostname !== "";
  if (url.protocol === "http:") return LOOPBACK_HOSTS.has(url.hostname);
  // Private-use schemes must contain a dot so they cannot collide with javascript:, data:, file: …
  return /^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/.test(url.protocol);
}

/**
 * Whether an authorization request's redirect_uri is the registered one: the same string, or, for
 * http on a loopback host, the same URI on another port. A native app listens on whatever port
 * the system gives it, so the server must allow any (RFC 8252 §7.3, OAuth 2.1 §8.4.2). Nothing
 * else is normalised: no case folding, no trailing slash, no prefix.
 */
export function redirectUriMatches(registered: string, asked: string): boolean {
  if (registered === asked) return true;
  if (!URL.canParse(registered) || !URL.canParse(asked) || asked.includes("#")) return false;
  const [r, a] = [new URL(registered), new URL(asked)];
  if (r.protocol !== "http:" || !LOOPBACK_HOSTS.has(r.hostname)) return false;
  // Everything but the port as the client registered it, character for character.
  const withoutPort = (url: URL, raw: string) => raw.replace(`${url.protocol}//${url.host}`, `${url.protocol}//${url.hostname}`);
  return (
    a.protocol === r.protocol && a.hostname === r.hostname && a.username === "" && a.password === "" && withoutPort(a, asked) === withoutPort(r, registered)
  );
}

const boundedUrl = storableText().max(MAX_CLIENT_METADATA_URL_LENGTH);

/**
 * A list a client may fill with values we do not support (Claude's metadata document lists the
 * JWT-bearer grant, for one). RFC 7591 lets the server replace requested values, so the list is
 * narrowed to the supported ones, order kept and duplicates dropped; only a list left empty, or
 * one that is not a bounded list of strings, is refused.
 */
function narrowedList<T extends string>(supported: readonly [T, ...T[]], noneMessage: string) {
  return z
    .array(storableText().max(256))
    .max(16)
    .transform((list) => [...new Set(list.filter((v): v is T => (supported as readonly string[]).includes(v)))])
    .pipe(z.array(z.enum(supported)).min(1, noneMessage));
}
const httpsUrl = boundedUrl.refine((v) => URL.canParse(v) && new URL(v).protocol === "https:", "must be an https URL");

export const oauthClientMetadataSchema = z.object({
  redirect_uris: z
    .array(boundedUrl.refine(isAcceptableRedirectUri, "must be https, http on a loopback host, or a reverse-DNS private-use scheme, without a fragment"))
    .min(1)
    .max(MAX_REDIRECT_URIS),
  token_endpoint_auth_method: z.enum(TOKEN_ENDPOINT_AUTH_METHODS).default("none"),
  grant_types: narrowedList(OAUTH_GRANT_TYPES, `none of the grant types is supported (${OAUTH_GRANT_TYPES.join(", ")})`).default([
    "authorization_code",
    "refresh_token",
  ]),
  response_types: narrowedList(["code"], "only the code response type is supported").default(["code"]),
  client_name: storableText().trim().min(1).max(MAX_CLIENT_NAME_LENGTH).optional(),
  client_uri: httpsUrl.optional(),
  logo_uri: httpsUrl.optional(),
  /** Space-separated scopes the client may ask for; the server narrows it to what it supports. */
  scope: storableText().max(256).optional(),
  software_id: storableText().max(256).optional(),
  software_version: storableText().max(64).optional(),
});
export type OAuthClientMetadata = z.output<typeof oauthClientMetadataSchema>;

/**
 * A Client ID Metadata Document: client metadata whose client_id is the very https URL it was
 * fetched from (the fetcher checks that equality). It carries no secret, so it may only describe a
 * public client.
 */
export const clientMetadataDocumentSchema = oauthClientMetadataSchema.extend({
  client_id: httpsUrl,
  token_endpoint_auth_method: z.literal("none").default("none"),
});
export type ClientMetadataDocument = z.output<typeof clientMetadataDocumentSchema>;
