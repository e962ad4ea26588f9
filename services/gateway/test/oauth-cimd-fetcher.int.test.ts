/**
 * The Client ID Metadata Document fetcher against real HTTPS servers on 127.0.0.1 with a
 * self-signed certificate made for the test. Hostnames (client.example, …) reach those servers
 * through an injected resolver; the address policy stays strict except where a test explicitly
 * lets 127.0.0.1 through, and every refusal of a non-public address is proven to happen before a
 * connection by the server's connection count.
 */
import { Writable } from "node:stream";
import { AppError } from "@3ngram/errors";
import { createLogger } from "@3ngram/runtime";
import type { ClientMetadataDocument } from "@3ngram/schema";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createClientMetadataFetcher, type ClientMetadataFetcherOptions } from "../src/oauth/cimd/index.js";
import { json, redirect, selfSignedCertificate, startDocumentServer, type DocumentServer, type TestCertificate } from "./support/tls-document-server.js";

const NAMES = ["client.example", "hop1.example", "hop2.example", "hop3.example", "hop4.example", "loopback.example", "mapped.example", "mixed.example"];

let certificate: TestCertificate;
let otherCertificate: TestCertificate;
let server: DocumentServer;
let otherServer: DocumentServer;
/** Hostname → the answers the test resolver gives. */
const hosts = new Map<string, string[]>();
const resolved: string[] = [];

async function resolve(hostname: string): Promise<string[]> {
  resolved.push(hostname);
  const answers = hosts.get(hostname);
  if (answers === undefined) throw Object.assign(new Error(`no test mapping for ${hostname}`), { code: "ENOTFOUND" });
  return answers;
}

beforeAll(async () => {
  certificate = selfSignedCertificate(NAMES);
  otherCertificate = selfSignedCertificate(["other.example"]);
  server = await startDocumentServer(certificate);
  otherServer = await startDocumentServer(otherCertificate);
});

afterAll(async () => {
  await server?.close();
  await otherServer?.close();
});

beforeEach(() => {
  hosts.clear();
  resolved.length = 0;
  for (const name of NAMES) hosts.set(name, ["127.0.0.1"]);
});

let pathCounter = 0;
/** A fresh path per test, so request counts on the shared server never mix between tests. */
function freshPath(label: string): string {
  pathCounter += 1;
  return `/${label}-${pathCounter}.json`;
}

/** A fetcher that trusts the test certificates and reaches the test servers, with 127.0.0.1 let through. */
function localFetcher(overrides: ClientMetadataFetcherOptions = {}) {
  return createClientMetadataFetcher({
    resolve,
    ca: [certificate.cert, otherCertificate.cert],
    allowedPorts: [server.port, otherServer.port],
    allowAddress: (address) => address === "127.0.0.1",
    ...overrides,
  });
}

/** The same, with the strict production address policy (no allowAddress). */
function strictFetcher(overrides: ClientMetadataFetcherOptions = {}) {
  return createClientMetadataFetcher({
    resolve,
    ca: [certificate.cert],
    allowedPorts: [server.port],
    ...overrides,
  });
}

function documentFor(clientId: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { client_id: clientId, client_name: "Test client", redirect_uris: ["https://client.example/callback"], ...extra };
}

/** Serves a valid document at a fresh path on client.example and returns its client_id. */
function serveDocument(label: string, headers: Record<string, string> = {}): { clientId: string; path: string } {
  const path = freshPath(label);
  const clientId = `${server.origin("client.example")}${path}`;
  server.route(path, json(documentFor(clientId), headers));
  return { clientId, path };
}

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

async function expectInvalid(promise: Promise<unknown>, message: RegExp): Promise<void> {
  const err = await refusal(promise);
  expect(err.reason).toBe("invalid_input");
  expect(err.details.field).toBe("client_id");
  expect(err.message).toMatch(message);
}

describe("fetching a valid document", () => {
  it("returns the validated document and verifies TLS for the client_id's hostname", async () => {
    const { clientId, path } = serveDocument("valid");
    const document: ClientMetadataDocument = await localFetcher().fetch(clientId);
    expect(document).toEqual({
      client_id: clientId,
      client_name: "Test client",
      redirect_uris: ["https://client.example/callback"],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    });
    expect(server.requests(path)).toBe(1);
    // The socket was dialled to 127.0.0.1, but SNI (and so the certificate check) used the name.
    expect(server.serverNames().at(-1)).toBe("client.example");
    expect(resolved).toEqual(["client.example"]);
  });

  it("accepts a more specific +json content type and narrows grant and response types it does not support", async () => {
    const path = freshPath("narrow");
    const clientId = `${server.origin("client.example")}${path}`;
    server.route(
      path,
      json(
        documentFor(clientId, {
          grant_types: ["authorization_code", "urn:ietf:params:oauth:grant-type:jwt-bearer", "refresh_token", "authorization_code"],
          response_types: ["code", "token"],
          unknown_member: { ignored: true },
        }),
        { "content-type": "application/client-metadata+json; charset=utf-8" },
      ),
    );
    const document = await localFetcher().fetch(clientId);
    expect(document.grant_types).toEqual(["authorization_code", "refresh_token"]);
    expect(document.response_types).toEqual(["code"]);
    expect(document).not.toHaveProperty("unknown_member");
  });
});

describe("cache", () => {
  it("serves a second fetch from the cache without a request", async () => {
    const { clientId, path } = serveDocument("cached");
    const fetcher = localFetcher();
    const first = await fetcher.fetch(clientId);
    const second = await fetcher.fetch(clientId);
    expect(second).toEqual(first);
    expect(server.requests(path)).toBe(1);
  });

  it("does not cache a document served with Cache-Control: no-store", async () => {
    const { clientId, path } = serveDocument("no-store", { "cache-control": "no-store" });
    const fetcher = localFetcher();
    await fetcher.fetch(clientId);
    await fetcher.fetch(clientId);
    expect(server.requests(path)).toBe(2);
  });

  it("honours max-age on the injected clock", async () => {
    const { clientId, path } = serveDocument("max-age", { "cache-control": "public, max-age=120" });
    let clock = 1_000_000;
    const fetcher = localFetcher({ now: () => clock });
    await fetcher.fetch(clientId);
    clock += 119_000;
    await fetcher.fetch(clientId);
    expect(server.requests(path)).toBe(1);
    clock += 2_000;
    await fetcher.fetch(clientId);
    expect(server.requests(path)).toBe(2);
  });

  it("keeps a document 5 minutes when the response says nothing, and at least the floor for a short max-age", async () => {
    const silent = serveDocument("default-ttl");
    const short = serveDocument("short-ttl", { "cache-control": "max-age=5" });
    let clock = 0;
    const fetcher = localFetcher({ now: () => clock });
    await fetcher.fetch(silent.clientId);
    await fetcher.fetch(short.clientId);
    clock = 59_000; // past max-age=5, inside the 60 s floor
    await fetcher.fetch(short.clientId);
    expect(server.requests(short.path)).toBe(1);
    clock = 299_000;
    await fetcher.fetch(silent.clientId);
    expect(server.requests(silent.path)).toBe(1);
    clock = 301_000;
    await fetcher.fetch(silent.clientId);
    await fetcher.fetch(short.clientId);
    expect(server.requests(silent.path)).toBe(2);
    expect(server.requests(short.path)).toBe(2);
  });

  it("cuts a long max-age to the ceiling", async () => {
    const { clientId, path } = serveDocument("long-ttl", { "cache-control": "max-age=31536000" });
    let clock = 0;
    const fetcher = localFetcher({ now: () => clock });
    await fetcher.fetch(clientId);
    clock = 3_599_000;
    await fetcher.fetch(clientId);
    expect(server.requests(path)).toBe(1);
    clock = 3_601_000;
    await fetcher.fetch(clientId);
    expect(server.requests(path)).toBe(2);
  });

  it("never caches a failure: the next fetch asks again and can succeed", async () => {
    const path = freshPath("flaky");
    const clientId = `${server.origin("client.example")}${path}`;
    server.route(path, (_req, res) => res.writeHead(500).end());
    const fetcher = localFetcher();
    await expectInvalid(fetcher.fetch(clientId), /HTTP 500/);
    server.route(path, json(documentFor(clientId)));
    await expect(fetcher.fetch(clientId)).resolves.toMatchObject({ client_id: clientId });
    expect(server.requests(path)).toBe(2);
  });

  it("evicts the least recently used document past the size bound", async () => {
    const a = serveDocument("lru-a");
    const b = serveDocument("lru-b");
    const c = serveDocument("lru-c");
    const fetcher = localFetcher({ cacheEntries: 2 });
    await fetcher.fetch(a.clientId);
    await fetcher.fetch(b.clientId);
    await fetcher.fetch(a.clientId); // a is now the most recent, b the least
    await fetcher.fetch(c.clientId); // evicts b
    await fetcher.fetch(a.clientId);
    await fetcher.fetch(b.clientId);
    expect(server.requests(a.path)).toBe(1);
    expect(server.requests(b.path)).toBe(2);
    expect(server.requests(c.path)).toBe(1);
  });
});

describe("concurrency", () => {
  it("de-duplicates concurrent fetches of one URL into one request", async () => {
    const { clientId, path } = serveDocument("dedup");
    const fetcher = localFetcher();
    const documents = await Promise.all(Array.from({ length: 5 }, () => fetcher.fetch(clientId)));
    expect(server.requests(path)).toBe(1);
    for (const document of documents) expect(document.client_id).toBe(clientId);
  });

  it("refuses a fetch past the in-flight cap as unavailable, without a request", async () => {
    const held = freshPath("held");
    const heldId = `${server.origin("client.example")}${held}`;
    let release: () => void = () => undefined;
    let arrived: () => void = () => undefined;
    const requestArrived = new Promise<void>((r) => (arrived = r));
    server.route(held, (_req, res) => {
      arrived();
      release = () => json(documentFor(heldId))(_req, res);
    });
    const other = serveDocument("over-cap");
    const fetcher = localFetcher({ maxInFlight: 1 });

    const first = fetcher.fetch(heldId);
    await requestArrived;
    const err = await refusal(fetcher.fetch(other.clientId));
    expect(err.reason).toBe("unavailable");
    expect(err.details).toMatchObject({ field: "client_id", retryable: true });
    expect(server.requests(other.path)).toBe(0);

    release();
    await expect(first).resolves.toMatchObject({ client_id: heldId });
    // The slot is free again.
    await expect(fetcher.fetch(other.clientId)).resolves.toMatchObject({ client_id: other.clientId });
  });
});

describe("address policy (strict defaults)", () => {
  it.each([["127.0.0.1"], ["::ffff:127.0.0.1"]])("refuses a hostname resolving to %s before any connection", async (address) => {
    hosts.set("loopback.example", [address]);
    const path = freshPath("loopback");
    server.route(path, json(documentFor(`${server.origin("loopback.example")}${path}`)));
    const before = server.connections();
    await expectInvalid(strictFetcher().fetch(`${server.origin("loopback.example")}${path}`), /loopback\.example has no public address/);
    expect(resolved).toEqual(["loopback.example"]);
    expect(server.connections()).toBe(before);
  });

  // A second answer the fetcher must refuse beside 127.0.0.1 (which this fetcher lets through):
  // if the check were skipped the socket would go to the first answer, the local server, and the
  // connection count would show it. No packet is ever sent to the refused address either way.
  it.each([
    ["10.0.0.1"],
    ["172.16.5.4"],
    ["192.168.1.1"],
    ["169.254.169.254"],
    ["100.64.0.1"],
    ["0.0.0.0"],
    ["::1"],
    ["fd00::1"],
    ["fe80::1"],
    ["::ffff:10.0.0.1"],
    ["::ffff:169.254.169.254"],
    ["224.0.0.1"],
    ["192.0.2.10"],
  ])("refuses a hostname when any answer (%s) is non-public, before any connection", async (address) => {
    hosts.set("mixed.example", ["127.0.0.1", address]);
    const path = freshPath("mixed");
    server.route(path, json(documentFor(`${server.origin("mixed.example")}${path}`)));
    const before = server.connections();
    await expectInvalid(localFetcher().fetch(`${server.origin("mixed.example")}${path}`), /has no public address/);
    expect(server.connections()).toBe(before);
    expect(server.requests(path)).toBe(0);
  });

  it("refuses an IP-literal host in a private range without resolving it", async () => {
    await expectInvalid(strictFetcher().fetch(`https://127.0.0.1:${server.port}/client.json`), /not a public address/);
    await expectInvalid(strictFetcher().fetch("https://[::ffff:a9fe:a9fe]/latest/meta-data"), /not a public address/);
    expect(resolved).toEqual([]);
  });

  it("refuses a port that was not allowed, and a host that does not resolve", async () => {
    await expectInvalid(strictFetcher({ allowedPorts: [] }).fetch(`${server.origin("client.example")}/client.json`), /port \d+ is not allowed/);
    await expectInvalid(localFetcher().fetch(`${server.origin("nowhere.example")}/client.json`), /nowhere\.example has no public address/);
  });

  it("answers a name that does not resolve and one that resolves to a private address alike (no oracle for internal names)", async () => {
    hosts.set("internal.example", ["10.0.0.7"]);
    const message = async (host: string) => (await refusal(strictFetcher().fetch(`${server.origin(host)}/client.json`))).message.replace(host, "HOST");
    expect(await message("internal.example")).toBe(await message("nowhere.example"));
  });

  it("refuses a certificate that is not for the client_id's hostname (TLS is verified for the original host)", async () => {
    // other.example's certificate is trusted, but the client_id names client.example.
    const path = freshPath("wrong-cert");
    otherServer.route(path, json({}));
    const before = otherServer.connections();
    const err = await refusal(localFetcher().fetch(`${otherServer.origin("client.example")}${path}`));
    expect(err.reason).toBe("unavailable");
    expect(err.message).toMatch(/ERR_TLS_CERT_ALTNAME_INVALID/);
    expect(otherServer.connections()).toBe(before + 1);
    expect(otherServer.requests(path)).toBe(0);
  });

  it("refuses a certificate no trusted CA vouches for", async () => {
    const { clientId, path } = serveDocument("untrusted");
    const err = await refusal(createClientMetadataFetcher({ resolve, allowedPorts: [server.port], allowAddress: (a) => a === "127.0.0.1" }).fetch(clientId));
    expect(err.reason).toBe("unavailable");
    expect(err.message).toMatch(/could not be verified/);
    expect(server.requests(path)).toBe(0);
  });
});

describe("redirects", () => {
  /** /start on hop1 → hop2 → … → the document on client.example; returns the first URL. */
  function chain(hops: number): { clientId: string; documentPath: string } {
    const documentPath = freshPath("target");
    const clientId = `${server.origin("hop1.example")}${freshPath("start")}`;
    server.route(documentPath, json(documentFor(clientId)));
    let next = `${server.origin("client.example")}${documentPath}`;
    for (let i = hops; i >= 2; i -= 1) {
      const path = freshPath(`hop${i}`);
      server.route(path, redirect(next, 307));
      next = `${server.origin(`hop${i}.example`)}${path}`;
    }
    server.route(new URL(clientId).pathname, redirect(next));
    return { clientId, documentPath };
  }

  it("are refused by default, as the draft requires", async () => {
    const { clientId, documentPath } = chain(1);
    await expectInvalid(localFetcher().fetch(clientId), /redirected \(redirects are not followed\)/);
    expect(server.requests(documentPath)).toBe(0);
  });

  it("when enabled, follows a chain within the cap and checks client_id against the ORIGINAL URL", async () => {
    const { clientId, documentPath } = chain(3);
    const document = await localFetcher({ maxRedirects: 3 }).fetch(clientId);
    expect(document.client_id).toBe(clientId);
    expect(server.requests(documentPath)).toBe(1);
    // Every hop's host was resolved by us.
    expect(resolved).toEqual(["hop1.example", "hop2.example", "hop3.example", "client.example"]);
  });

  it("refuses a chain longer than the cap", async () => {
    const { clientId, documentPath } = chain(4);
    await expectInvalid(localFetcher({ maxRedirects: 3 }).fetch(clientId), /redirected more than 3 times/);
    expect(server.requests(documentPath)).toBe(0);
  });

  it("refuses a redirect to a host with a non-public address before connecting to it", async () => {
    hosts.set("mixed.example", ["127.0.0.1", "169.254.169.254"]);
    const secret = freshPath("secret");
    server.route(secret, json({}));
    const start = freshPath("to-metadata");
    server.route(start, redirect(`${server.origin("mixed.example")}${secret}`));
    await expectInvalid(localFetcher({ maxRedirects: 3 }).fetch(`${server.origin("client.example")}${start}`), /mixed\.example has no public address/);
    expect(server.requests(secret)).toBe(0);
  });

  it("refuses a redirect to http or to a private IP literal", async () => {
    const plain = freshPath("to-http");
    server.route(plain, redirect(`http://client.example:${server.port}/doc.json`));
    await expectInvalid(localFetcher({ maxRedirects: 3 }).fetch(`${server.origin("client.example")}${plain}`), /redirect target must be an https URL/);
    const literal = freshPath("to-literal");
    server.route(literal, redirect("https://10.1.2.3/doc.json"));
    await expectInvalid(localFetcher({ maxRedirects: 3 }).fetch(`${server.origin("client.example")}${literal}`), /host 10\.1\.2\.3 is not a public address/);
  });

  it("refuses a document whose client_id is the URL it was redirected to", async () => {
    const target = freshPath("self-named");
    const targetUrl = `${server.origin("client.example")}${target}`;
    server.route(target, json(documentFor(targetUrl)));
    const start = freshPath("renamed");
    server.route(start, redirect(targetUrl));
    await expectInvalid(localFetcher({ maxRedirects: 1 }).fetch(`${server.origin("client.example")}${start}`), /client_id does not match/);
  });
});

describe("response limits", () => {
  const oversize = "x".repeat(6_000);

  it("refuses a declared Content-Length over the cap without waiting for the body", async () => {
    const path = freshPath("declared-large");
    // Promise a large body, send a little and never finish: only the up-front check can end this
    // before the deadline, so the outcome (invalid_input, not a timeout) proves it ran.
    server.route(path, (_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "1000000" });
      res.write("{");
    });
    await expectInvalid(localFetcher().fetch(`${server.origin("client.example")}${path}`), /larger than 5120 bytes/);
  });

  it("stops reading an undeclared body once it passes the cap", async () => {
    const path = freshPath("chunked-large");
    // Chunked, no length, never ended: only the streaming cap can end this before the deadline.
    server.route(path, (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write(`{"client_name":"${oversize}`);
    });
    await expectInvalid(localFetcher().fetch(`${server.origin("client.example")}${path}`), /larger than 5120 bytes/);
  });

  it("times out a server that never answers as unavailable", async () => {
    const path = freshPath("silent");
    server.route(path, () => undefined);
    const err = await refusal(localFetcher({ timeoutMs: 300 }).fetch(`${server.origin("client.example")}${path}`));
    expect(err.reason).toBe("unavailable");
    expect(err.message).toMatch(/within 300 ms/);
    expect(err.details).toMatchObject({ field: "client_id", retryable: true });
  });

  it.each([
    ["text/html", "<html></html>"],
    ["text/plain", "{}"],
    ["", "{}"],
  ])("refuses content type %j", async (contentType, body) => {
    const path = freshPath("content-type");
    server.route(path, (_req, res) => {
      res.writeHead(200, contentType === "" ? {} : { "content-type": contentType }).end(body);
    });
    await expectInvalid(localFetcher().fetch(`${server.origin("client.example")}${path}`), /must be served as application\/json/);
  });

  it("refuses a status other than 200", async () => {
    const path = freshPath("missing");
    await expectInvalid(localFetcher().fetch(`${server.origin("client.example")}${path}`), /answered HTTP 404/);
  });
});

describe("document validation", () => {
  function serve(body: string | Record<string, unknown>): string {
    const path = freshPath("doc");
    const text = typeof body === "string" ? body : JSON.stringify(body);
    server.route(path, (_req, res) => res.writeHead(200, { "content-type": "application/json" }).end(text));
    return `${server.origin("client.example")}${path}`;
  }

  it("refuses invalid JSON without echoing it", async () => {
    const clientId = serve('{"client_id": "SECRET-LOOKING-TEXT"');
    const err = await refusal(localFetcher().fetch(clientId));
    expect(err.message).toMatch(/not valid JSON/);
    expect(err.message).not.toContain("SECRET-LOOKING-TEXT");
  });

  it("logs a refusal with the host and the reason, never the document", async () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString("utf8"));
        done();
      },
    });
    const logger = createLogger({ service: "test", level: "warn", destination });
    const path = freshPath("logged");
    const clientId = `${server.origin("client.example")}${path}`;
    server.route(path, json(documentFor(clientId, { client_name: "DOCUMENT-TEXT", redirect_uris: ["ftp://DOCUMENT-URI"] })));
    await expectInvalid(localFetcher({ logger }).fetch(clientId), /redirect_uris\.0/);
    const entry = JSON.parse(lines.at(-1) ?? "{}") as Record<string, unknown>;
    expect(entry).toMatchObject({ level: 40, host: "client.example", reason: "invalid_input", msg: "client metadata document refused" });
    expect(lines.join("")).not.toContain("DOCUMENT-");
  });

  it("refuses a JSON value that is not an object", async () => {
    await expectInvalid(localFetcher().fetch(serve("[1,2]")), /not a JSON object/);
  });

  it("refuses a document whose client_id differs from the URL, even by normalisation", async () => {
    const path = freshPath("mismatch");
    const clientId = `${server.origin("client.example")}${path}`;
    server.route(path, json(documentFor(`${server.origin("CLIENT.example")}${path}`)));
    await expectInvalid(localFetcher().fetch(clientId), /client_id does not match/);
  });

  it("names the failing member of a schema violation", async () => {
    const path = freshPath("bad-redirect");
    const clientId = `${server.origin("client.example")}${path}`;
    server.route(path, json(documentFor(clientId, { redirect_uris: ["https://client.example/ok", "javascript:alert(1)"] })));
    const err = await refusal(localFetcher().fetch(clientId));
    expect(err.reason).toBe("invalid_input");
    expect(err.message).toMatch(/member redirect_uris\.1 is invalid/);
    expect(err.message).not.toContain("javascript");
  });

  it("refuses a document that asks for a shared-secret client", async () => {
    const secretAuth = freshPath("secret-auth");
    const secretAuthId = `${server.origin("client.example")}${secretAuth}`;
    server.route(secretAuth, json(documentFor(secretAuthId, { token_endpoint_auth_method: "client_secret_basic" })));
    await expectInvalid(localFetcher().fetch(secretAuthId), /member token_endpoint_auth_method is invalid/);

    const withSecret = freshPath("with-secret");
    const withSecretId = `${server.origin("client.example")}${withSecret}`;
    server.route(withSecret, json(documentFor(withSecretId, { client_secret: "s3cr3t" })));
    const err = await refusal(localFetcher().fetch(withSecretId));
    expect(err.message).toMatch(/must not contain client_secret/);
    expect(err.message).not.toContain("s3cr3t");
  });

  it("refuses a document that supports none of our grant types", async () => {
    const path = freshPath("no-grants");
    const clientId = `${server.origin("client.example")}${path}`;
    server.route(path, json(documentFor(clientId, { grant_types: ["client_credentials"] })));
    await expectInvalid(localFetcher().fetch(clientId), /member grant_types is invalid/);
  });
});
