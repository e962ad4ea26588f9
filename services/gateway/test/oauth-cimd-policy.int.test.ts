/**
 * The pure parts of the Client ID Metadata Document fetcher: which addresses count as public,
 * which client_id URLs may be fetched, how long a response may be cached, how the pinned lookup
 * answers the socket, and that the built module loads under plain Node (no bundler interop).
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { AppError } from "@3ngram/errors";
import { describe, expect, it } from "vitest";
import { connectableAddress, isPublicAddress } from "../src/oauth/cimd/address-policy.js";
import { cacheLifetimeMs } from "../src/oauth/cimd/cache-lifetime.js";
import { parseClientIdUrl, parseHopUrl, type UrlPolicy } from "../src/oauth/cimd/client-id-url.js";
import { createClientMetadataFetcher, isClientMetadataUrl } from "../src/oauth/cimd/index.js";
import { pinnedLookup } from "../src/oauth/cimd/resolve-host.js";

describe("isPublicAddress", () => {
  const refused = [
    // IPv4 special-use ranges
    "0.0.0.0",
    "0.1.2.3",
    "10.0.0.1",
    "10.255.255.255",
    "100.64.0.1",
    "100.127.255.254",
    "127.0.0.1",
    "127.53.0.9",
    "169.254.169.254",
    "169.254.0.1",
    "172.16.0.1",
    "172.31.255.255",
    "192.0.0.8",
    "192.0.2.1",
    "192.88.99.1",
    "192.168.0.1",
    "198.18.0.1",
    "198.19.255.255",
    "198.51.100.7",
    "203.0.113.9",
    "224.0.0.1",
    "239.255.255.250",
    "240.0.0.1",
    "255.255.255.255",
    // IPv6 special-use ranges
    "::",
    "::1",
    "fe80::1",
    "fe80::1%eth0",
    "fc00::1",
    "fd12:3456:789a::1",
    "ff02::1",
    "fec0::1",
    "100::1",
    "2001:db8::1",
    "2001::1",
    "2002:7f00:1::1",
    "64:ff9b::a9fe:a9fe",
    "3fff::1",
    // IPv4 hidden in IPv6
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
    "::ffff:0.0.0.0",
    "::7f00:1",
    // not addresses at all
    "",
    "localhost",
    "1.2.3.4.5",
    "::g",
  ];
  const allowed = [
    "8.8.8.8",
    "1.1.1.1",
    "93.184.216.34",
    "172.32.0.1",
    "100.128.0.1",
    "11.0.0.1",
    "2606:4700:4700::1111",
    "2a00:1450:4001::1",
    "::ffff:8.8.8.8",
  ];

  it.each(refused)("refuses %j", (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(allowed)("allows %j", (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });
});

describe("client_id URL rules", () => {
  const policy: UrlPolicy = { allowedPorts: new Set([8443]), allowAddress: isPublicAddress };

  it.each([
    "https://client.example.com/oauth/metadata.json",
    "https://client.example.com/client",
    "https://client.example.com:8443/client",
    "https://client.example.com/client?v=1",
    "https://93.184.216.34/client.json",
  ])("accepts %s", (clientId) => {
    expect(parseClientIdUrl(clientId, policy).href).toBe(clientId);
    expect(isClientMetadataUrl(clientId)).toBe(true);
  });

  it.each([
    ["http://client.example.com/client", /https/],
    ["ftp://client.example.com/client", /https/],
    ["https://client.example.com/", /path other than/],
    ["https://client.example.com", /path other than/],
    ["https://user:pass@client.example.com/client", /credentials/],
    ["https://user@client.example.com/client", /credentials/],
    ["https://client.example.com/client#section", /fragment/],
    ["https://client.example.com/a/../client", /path segments/],
    ["https://client.example.com/a/./client", /path segments/],
    ["https://client.example.com/a/%2e%2E/client", /path segments/],
    ["https://client.example.com/..", /path segments/],
    ["https://Client.Example.com/client", /normalized/],
    ["https://client.example.com:443/client", /normalized/],
    ["https://client.example.com/a b", /printable ASCII/],
    ["https://client.example.com/\tclient", /printable ASCII/],
    ["https://bücher.example/client", /printable ASCII/],
    ["https://client.example.com:8080/client", /port 8080 is not allowed/],
    ["https://127.0.0.1/client", /not a public address/],
    ["https://[::1]/client", /not a public address/],
    ["https://169.254.169.254/latest/meta-data", /not a public address/],
    ["https://0x7f.0.0.1/client", /not a public address/],
    ["https://2130706433/client", /not a public address/],
    ["not a url", /printable ASCII/],
    ["https:/client", /path other than/],
    ["https:/client/x", /normalized/],
    [`https://client.example.com/${"a".repeat(2048)}`, /longer than 2048/],
  ])("refuses %s", (clientId, message) => {
    let thrown: unknown;
    try {
      parseClientIdUrl(clientId, policy);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect((thrown as AppError).reason).toBe("invalid_input");
    expect((thrown as AppError).details.field).toBe("client_id");
    expect((thrown as AppError).message).toMatch(message);
  });

  it("checks redirect targets for scheme, credentials, port and IP literal, and drops their fragment", () => {
    const base = new URL("https://client.example.com/start");
    expect(parseHopUrl("/next#frag", base, policy).href).toBe("https://client.example.com/next");
    expect(() => parseHopUrl("http://client.example.com/next", base, policy)).toThrow(/https/);
    expect(() => parseHopUrl("https://u:p@client.example.com/next", base, policy)).toThrow(/credentials/);
    expect(() => parseHopUrl("https://client.example.com:22/next", base, policy)).toThrow(/port 22/);
    expect(() => parseHopUrl("https://[fd00::1]/next", base, policy)).toThrow(/not a public address/);
  });
});

describe("cacheLifetimeMs", () => {
  const bounds = { minMs: 60_000, defaultMs: 300_000, maxMs: 3_600_000 };

  it.each([
    [{}, 300_000],
    [{ "cache-control": "max-age=600" }, 600_000],
    [{ "cache-control": "public, max-age=600, must-revalidate" }, 600_000],
    [{ "cache-control": "max-age=600, s-maxage=900" }, 900_000],
    [{ "cache-control": "max-age=600", age: "100" }, 500_000],
    [{ "cache-control": "max-age=10" }, 60_000],
    [{ "cache-control": "max-age=86400" }, 3_600_000],
    [{ "cache-control": 'max-age="120"' }, 120_000],
    [{ "cache-control": "max-age=0" }, 0],
    [{ "cache-control": "max-age=600", age: "600" }, 0],
    [{ "cache-control": "max-age=abc" }, 0],
    [{ "cache-control": "no-store" }, 0],
    [{ "cache-control": "no-cache" }, 0],
    [{ "cache-control": "private, max-age=600" }, 0],
    [{ "cache-control": "max-age=600, NO-STORE" }, 0],
    [{ "cache-control": "max-age=600", vary: "accept, *" }, 0],
    [{ date: "Mon, 30 Nov 2026 10:00:00 GMT", expires: "Mon, 30 Nov 2026 10:20:00 GMT" }, 1_200_000],
    [{ date: "Mon, 30 Nov 2026 10:00:00 GMT", expires: "Mon, 30 Nov 2026 09:00:00 GMT" }, 0],
    [{ date: "Mon, 30 Nov 2026 10:00:00 GMT", expires: "0" }, 0],
    [{ "cache-control": "max-age=900", date: "Mon, 30 Nov 2026 10:00:00 GMT", expires: "Mon, 30 Nov 2026 09:00:00 GMT" }, 900_000],
  ])("%j → %i ms", (headers, expected) => {
    expect(cacheLifetimeMs(headers, bounds)).toBe(expected);
  });
});

describe("pinnedLookup", () => {
  function lookup(addresses: string[], all: boolean): Promise<unknown> {
    return new Promise((resolve, reject) => {
      pinnedLookup(addresses)("client.example.com", { all }, (err: Error | null, address: unknown, family?: number) => {
        if (err) reject(err);
        else resolve(all ? address : { address, family });
      });
    });
  }

  it("answers with the validated addresses in both callback shapes, IPv4-mapped ones as IPv4", async () => {
    expect(await lookup(["93.184.216.34", "2606:4700::1"], false)).toEqual({ address: "93.184.216.34", family: 4 });
    expect(await lookup(["::ffff:93.184.216.34", "2606:4700::1"], true)).toEqual([
      { address: "93.184.216.34", family: 4 },
      { address: "2606:4700::1", family: 6 },
    ]);
  });

  it("keeps the family of each address", () => {
    expect(connectableAddress("::ffff:5db8:d822")).toEqual({ address: "93.184.216.34", family: 4 });
    expect(connectableAddress("2606:4700::1")).toEqual({ address: "2606:4700::1", family: 6 });
  });
});

describe("fetcher options", () => {
  it("refuses settings outside their bounds at construction", () => {
    expect(() => createClientMetadataFetcher({ maxRedirects: 4 })).toThrow(RangeError);
    expect(() => createClientMetadataFetcher({ maxRedirects: -1 })).toThrow(RangeError);
    expect(() => createClientMetadataFetcher({ timeoutMs: 0 })).toThrow(RangeError);
    expect(() => createClientMetadataFetcher({ cacheEntries: 0 })).toThrow(RangeError);
    expect(() => createClientMetadataFetcher({ maxInFlight: 1.5 })).toThrow(RangeError);
    expect(() => createClientMetadataFetcher({ cacheTtl: { minMs: 600_000 } })).toThrow(RangeError);
    expect(() => createClientMetadataFetcher({ maxRedirects: 3, cacheTtl: { maxMs: 86_400_000 } })).not.toThrow();
  });
});

describe("the built module under plain Node", () => {
  // ipaddr.js is CommonJS; a namespace import would work under vitest's interop and break in the
  // deployed ESM build. This loads the compiled file the way the gateway process does.
  const built = fileURLToPath(new URL("../dist/oauth/cimd/index.js", import.meta.url));

  it("classifies addresses and refuses a private IP literal without touching the network", () => {
    expect(existsSync(built), "run `npm run build` first").toBe(true);
    const script = `
      const { createClientMetadataFetcher, isPublicAddress } = await import(${JSON.stringify(built)});
      const refusal = await createClientMetadataFetcher().fetch("https://10.0.0.1/client.json").catch((err) => err.reason);
      console.log(JSON.stringify([isPublicAddress("8.8.8.8"), isPublicAddress("::ffff:127.0.0.1"), refusal]));
    `;
    const output = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(JSON.parse(output)).toEqual([true, false, "invalid_input"]);
  });
});
