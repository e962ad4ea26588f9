/**
 * TRUST_PROXY: which proxies may tell the gateway who the client is (X-Forwarded-For). The per-IP
 * limit counts req.ip, so trusting too much lets any client pick its own address and dodge it;
 * trusting too little counts every request behind an ingress as the ingress. "true" (trust every
 * hop) is refused for that reason: name the hops or the proxy addresses instead.
 */
import { isIP } from "node:net";

/** Express's `trust proxy` value: off, the number of proxies in front, or their addresses. */
export type TrustProxy = false | number | string[];

/** Names Express (proxy-addr) accepts for well-known ranges. */
const NAMED_RANGES = new Set(["loopback", "linklocal", "uniquelocal"]);

/** The parsed value, or a message saying what is wrong. */
export function parseTrustProxy(raw: string): { value: TrustProxy } | string {
  const value = raw.trim().toLowerCase();
  if (value === "false" || value === "0") return { value: false };
  if (value === "true") return "true would let any client choose its address; use a hop count (e.g. 1) or the proxy addresses";
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    return hops <= 10 ? { value: hops } : "hop count must be at most 10";
  }
  const entries = value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const entry of entries) if (!NAMED_RANGES.has(entry) && !isAddressOrCidr(entry)) return `not an address, CIDR or range name: ${entry}`;
  return entries.length > 0 ? { value: entries } : { value: false };
}

function isAddressOrCidr(entry: string): boolean {
  const [address = "", bits, extra] = entry.split("/");
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  if (bits === undefined) return true;
  if (!/^\d+$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}
