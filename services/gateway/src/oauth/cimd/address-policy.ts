// ipaddr.js is CommonJS: a default import is what Node's ESM loader gives us at run time (a
// namespace import only works under bundler interop, which is how tests could pass while the
// built gateway broke). test/oauth-cimd-address-policy.test.ts loads the built file under plain Node.
import ipaddr from "ipaddr.js";

type Address = ipaddr.IPv4 | ipaddr.IPv6;

// IPv6 global unicast (RFC 4291 §2.4). Everything outside it (IPv4-compatible ::a.b.c.d, ORCHID,
// unassigned space) is refused even where ipaddr.js has no name for the range.
const IPV6_GLOBAL_UNICAST: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse("2000::"), 3];

/**
 * Whether an address may be the target of a Client ID Metadata Document fetch: only addresses
 * that ipaddr.js classifies as plain "unicast" qualify, i.e. not loopback, RFC 1918 private,
 * link-local (169.254/16 with the cloud metadata endpoint, fe80::/10), CGNAT 100.64/10, unique
 * local fc00::/7, multicast, broadcast, unspecified (0/8, ::), the documentation, benchmarking,
 * 6to4, Teredo, NAT64 and other special-use ranges of RFC 6890. An IPv4-mapped IPv6 address is
 * judged as the IPv4 address it carries. Anything that does not parse as an address is refused.
 */
export function isPublicAddress(address: string): boolean {
  const parsed = parseAddress(address);
  if (parsed === undefined) return false;
  if (parsed.kind() === "ipv4") return parsed.range() === "unicast";
  const v6 = parsed as ipaddr.IPv6;
  if (v6.zoneId !== undefined) return false;
  return v6.range() === "unicast" && v6.match(IPV6_GLOBAL_UNICAST);
}

/** Whether a URL hostname (IPv6 in brackets, as URL.hostname gives it) is an IP literal. */
export function isIpLiteral(hostname: string): boolean {
  return ipaddr.isValid(stripBrackets(hostname));
}

export function stripBrackets(hostname: string): string {
  return hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
}

/**
 * The address to hand to the socket, with its family. An IPv4-mapped IPv6 answer becomes the
 * plain IPv4 address: connecting to "::ffff:a.b.c.d" as family 6 fails on IPv4-only hosts, and a
 * lookup override that reports it as family 4 fails everywhere.
 */
export function connectableAddress(address: string): { address: string; family: 4 | 6 } {
  const parsed = parseAddress(address);
  if (parsed === undefined) throw new Error("not an IP address");
  if (parsed.kind() === "ipv4") return { address: parsed.toString(), family: 4 };
  return { address: parsed.toString(), family: 6 };
}

function parseAddress(address: string): Address | undefined {
  const raw = stripBrackets(address);
  if (!ipaddr.isValid(raw)) return undefined;
  // process() turns an IPv4-mapped IPv6 address into the IPv4 address it carries. Other IPv4
  // spellings it accepts ("0x7f.0.0.1") parse to the address they mean, so they land in its range.
  return ipaddr.process(raw);
}
