import { promises as dns, type LookupAddress } from "node:dns";
import type { LookupFunction } from "node:net";
import { connectableAddress, isIpLiteral, stripBrackets } from "./address-policy.js";
import { refused, unreachable } from "./errors.js";
import type { AppError } from "@3ngram/errors";

/** Hostname → every address it resolves to (A and AAAA). */
export type ResolveHost = (hostname: string) => Promise<string[]>;

/** The system resolver, asked for every answer so that none can hide behind another. */
export const systemResolve: ResolveHost = async (hostname) => {
  const answers = await dns.lookup(hostname, { all: true, verbatim: true });
  return answers.map((answer) => answer.address);
};

/**
 * Resolves a URL host once and returns the addresses to connect to, refusing the host if ANY
 * answer is not allowed: an attacker who controls a zone can mix a public address with an
 * internal one and hope the client picks the second. An IP literal is checked as it is.
 */
export async function resolveAllowedAddresses(
  url: URL,
  resolve: ResolveHost,
  allowAddress: (address: string) => boolean,
  signal: AbortSignal,
): Promise<string[]> {
  const host = stripBrackets(url.hostname);
  let answers: string[];
  if (isIpLiteral(host)) {
    answers = [host];
  } else {
    try {
      answers = await abortable(resolve(host), signal);
    } catch (err) {
      if (signal.aborted) throw err;
      const code = (err as { code?: unknown }).code;
      if (code === "ENOTFOUND" || code === "ENODATA") throw noPublicAddress(host);
      throw unreachable(`host ${host} could not be resolved`, true);
    }
  }
  if (answers.length === 0) throw noPublicAddress(host);
  for (const address of answers) {
    if (!allowAddress(address)) throw noPublicAddress(host);
  }
  return answers;
}

/**
 * One refusal for a name that does not resolve and one that resolves to a private address: the
 * message reaches an unauthenticated caller (the authorization page), and two would let anyone
 * learn which names the server's own resolver knows (its cluster's services, say).
 */
function noPublicAddress(host: string): AppError {
  return refused(`host ${host} has no public address`);
}

/**
 * A `lookup` for the socket that answers with the addresses we already validated instead of
 * asking DNS again, so a rebinding answer between check and connect cannot redirect the
 * connection. TLS still verifies the certificate against the URL's hostname, because the request
 * keeps that hostname as its host and servername. Node asks with `all: true` when it races
 * address families (autoSelectFamily, the default since Node 20), so both answer shapes are served.
 */
export function pinnedLookup(addresses: readonly string[]): LookupFunction {
  const pinned: LookupAddress[] = addresses.map(connectableAddress);
  return (_hostname, options, callback) => {
    const first = pinned[0];
    if (first === undefined) {
      callback(Object.assign(new Error("no validated address"), { code: "ENOTFOUND" }), "", 0);
      return;
    }
    if ((options as { all?: boolean }).all === true) {
      (callback as unknown as (err: null, addresses: LookupAddress[]) => void)(null, pinned);
      return;
    }
    callback(null, first.address, first.family);
  };
}

function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolvePromise, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolvePromise(value);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}
