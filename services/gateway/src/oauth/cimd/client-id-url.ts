import { MAX_CLIENT_METADATA_URL_LENGTH } from "@3ngram/schema";
import { isIpLiteral, stripBrackets } from "./address-policy.js";
import { refused } from "./errors.js";

/** What decides whether a URL may be fetched at all (before any DNS). */
export interface UrlPolicy {
  /** Ports besides the https default (443) that may be connected to. */
  allowedPorts: ReadonlySet<number>;
  /** Whether an address is acceptable (the strict public-address check, unless a test widens it). */
  allowAddress: (address: string) => boolean;
}

// Anything outside visible ASCII (spaces, controls, non-ASCII) is refused rather than left to the
// URL parser, which silently drops tabs and newlines and rewrites Unicode hosts to punycode.
const VISIBLE_ASCII = /^[\x21-\x7e]+$/;
// A "." or ".." path segment, literally or percent-encoded (the URL parser treats both as dots).
const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?=[/?#]|$)/i;

/**
 * Checks a client_id against the Client Identifier URL rules (draft-ietf-oauth-client-id-metadata-
 * document §3) plus our own fetch policy, and returns it parsed. The draft compares client_ids
 * byte for byte and asks clients to normalise their URL, so we accept only a URL that is already
 * in the form the WHATWG parser produces: what we fetch is then exactly what the client named.
 */
export function parseClientIdUrl(clientId: string, policy: UrlPolicy): URL {
  if (clientId.length > MAX_CLIENT_METADATA_URL_LENGTH) refuse(`is longer than ${MAX_CLIENT_METADATA_URL_LENGTH} characters`);
  if (!VISIBLE_ASCII.test(clientId)) refuse("must be printable ASCII without spaces");
  if (!URL.canParse(clientId)) refuse("is not a URL");
  const url = new URL(clientId);
  if (url.protocol !== "https:") refuse("must be an https URL");
  if (clientId.includes("#")) refuse("must not contain a fragment");
  if (url.username !== "" || url.password !== "") refuse("must not contain credentials");
  if (DOT_SEGMENT.test(pathAndQuery(clientId))) refuse('must not contain "." or ".." path segments');
  if (url.pathname === "/" || url.pathname === "") refuse('must have a path other than "/"');
  checkHost(url, policy);
  if (url.href !== clientId) refuse("must be a normalized URL (lower-case host, no default port, percent-encoding as a browser would send it)");
  return url;
}

/**
 * Checks a URL the fetch is about to follow (a redirect target): https, no credentials, bounded,
 * an allowed port, and not an IP literal of a non-public range. The fragment is dropped.
 */
export function parseHopUrl(location: string, base: URL, policy: UrlPolicy): URL {
  if (location.length > MAX_CLIENT_METADATA_URL_LENGTH) refuse(`redirect target is longer than ${MAX_CLIENT_METADATA_URL_LENGTH} characters`);
  if (!VISIBLE_ASCII.test(location) || !URL.canParse(location, base.href)) refuse("redirect target is not a URL");
  const url = new URL(location, base);
  url.hash = "";
  if (url.protocol !== "https:") refuse("redirect target must be an https URL");
  if (url.username !== "" || url.password !== "") refuse("redirect target must not contain credentials");
  checkHost(url, policy);
  return url;
}

function checkHost(url: URL, policy: UrlPolicy): void {
  const port = url.port === "" ? 443 : Number(url.port);
  if (port !== 443 && !policy.allowedPorts.has(port)) refuse(`port ${port} is not allowed (only 443)`);
  if (isIpLiteral(url.hostname) && !policy.allowAddress(stripBrackets(url.hostname))) {
    refuse(`host ${url.hostname} is not a public address`);
  }
}

/** The part of a URL string after its authority ("/path?query"), read from the string itself. */
function pathAndQuery(raw: string): string {
  const afterScheme = raw.indexOf("//");
  if (afterScheme < 0) return raw;
  const rest = raw.slice(afterScheme + 2);
  const end = rest.search(/[/?#]/);
  return end < 0 ? "" : rest.slice(end);
}

function refuse(message: string): never {
  throw refused(message);
}
