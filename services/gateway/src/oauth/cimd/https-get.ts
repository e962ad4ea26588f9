import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import { request } from "node:https";
import { isAppError } from "@3ngram/errors";
import { isIpLiteral, stripBrackets } from "./address-policy.js";
import { refused, unreachable } from "./errors.js";
import { pinnedLookup } from "./resolve-host.js";

export interface HopOptions {
  /** Validated addresses of the URL's host; the socket connects to these and nothing else. */
  addresses: readonly string[];
  maxBytes: number;
  /** Trust anchors for TLS; undefined means Node's bundled roots. */
  ca: readonly (string | Buffer)[] | undefined;
  /** Aborts the request and the body read (the overall deadline). */
  signal: AbortSignal;
}

export type HopResult = { kind: "redirect"; location: string } | { kind: "document"; body: Uint8Array; headers: IncomingHttpHeaders };

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
// application/json or application/<anything>+json, parameters (charset) allowed (draft §4).
const JSON_MEDIA_TYPE = /^application\/(?:[a-z0-9!#$&^_.-]+\+)?json$/;
// Response headers beyond this are a protocol error: a metadata response needs a handful.
const MAX_RESPONSE_HEADER_BYTES = 8 * 1024;
const TLS_VERIFICATION_CODES = new Set([
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_REVOKED",
]);

/**
 * One GET over TLS to `url`, connecting only to the pre-validated addresses while verifying the
 * certificate for the URL's hostname. Answers a redirect's Location (unfollowed), or the body of
 * a 200 application/json response read up to `maxBytes`; every other outcome is an AppError.
 */
export function httpsGetOnce(url: URL, options: HopOptions): Promise<HopResult> {
  const host = stripBrackets(url.hostname);
  return new Promise<HopResult>((resolve, reject) => {
    let settled = false;
    // Whatever happens, the connection is closed once we have our answer: nothing more is read.
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      req.destroy();
      outcome();
    };
    const fail = (err: unknown) => {
      const reason = options.signal.aborted ? options.signal.reason : isAppError(err) ? err : connectionError(err as Error, host);
      settle(() => reject(reason));
    };
    const req = request(
      {
        protocol: "https:",
        host,
        port: url.port === "" ? 443 : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: "GET",
        // SNI and certificate check against the name the client gave, not the address we dial.
        ...(isIpLiteral(host) ? {} : { servername: host }),
        lookup: pinnedLookup(options.addresses),
        ...(options.ca === undefined ? {} : { ca: [...options.ca] }),
        rejectUnauthorized: true,
        minVersion: "TLSv1.2",
        // A fresh connection per hop: a pooled socket could be one dialled for another address.
        agent: false,
        maxHeaderSize: MAX_RESPONSE_HEADER_BYTES,
        signal: options.signal,
        headers: { accept: "application/json", "accept-encoding": "identity", "user-agent": "3ngram-cimd-fetcher" },
      },
      (res) => {
        onResponse(res, options).then((result) => settle(() => resolve(result)), fail);
      },
    );
    req.on("error", fail);
    req.end();
  });
}

async function onResponse(res: IncomingMessage, options: HopOptions): Promise<HopResult> {
  const status = res.statusCode ?? 0;
  if (REDIRECT_STATUSES.has(status)) {
    const location = res.headers.location;
    if (location === undefined || location === "") throw refused(`redirect (HTTP ${status}) has no Location`);
    return { kind: "redirect", location };
  }
  if (status !== 200) {
    throw refused(`metadata document request answered HTTP ${status} (200 required)`);
  }
  const mediaType = (res.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  if (!JSON_MEDIA_TYPE.test(mediaType)) throw refused("metadata document must be served as application/json");
  const encoding = res.headers["content-encoding"]?.trim().toLowerCase();
  if (encoding !== undefined && encoding !== "" && encoding !== "identity") throw refused("metadata document must not be content-encoded");
  const declared = res.headers["content-length"];
  if (declared !== undefined && Number(declared) > options.maxBytes) throw tooLarge(options.maxBytes);
  return { kind: "document", body: await readCapped(res, options.maxBytes), headers: res.headers };
}

/** Reads the body, giving up as soon as it passes `maxBytes` (the caller then drops the connection). */
async function readCapped(res: IncomingMessage, maxBytes: number): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > maxBytes) throw tooLarge(maxBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, total);
}

function tooLarge(maxBytes: number) {
  return refused(`metadata document is larger than ${maxBytes} bytes`);
}

function connectionError(err: Error, host: string) {
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string" && TLS_VERIFICATION_CODES.has(code)) {
    return unreachable(`TLS certificate of ${host} could not be verified (${code})`, false);
  }
  return unreachable(`could not fetch the metadata document from ${host}`, true);
}
