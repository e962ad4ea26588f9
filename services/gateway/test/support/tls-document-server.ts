import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TLSSocket } from "node:tls";

export interface TestCertificate {
  key: string;
  cert: string;
}

/** A throwaway self-signed certificate (ECDSA P-256, valid 2 days) for the given DNS names, made with openssl. */
export function selfSignedCertificate(names: readonly string[]): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), "cimd-cert-"));
  try {
    const keyPath = join(dir, "key.pem");
    const certPath = join(dir, "cert.pem");
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        keyPath,
        "-out",
        certPath,
        "-days",
        "2",
        "-subj",
        `/CN=${names[0]}`,
        "-addext",
        `subjectAltName=${names.map((name) => `DNS:${name}`).join(",")}`,
      ],
      { stdio: "ignore" },
    );
    return { key: readFileSync(keyPath, "utf8"), cert: readFileSync(certPath, "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * A real HTTPS server on 127.0.0.1 that serves whatever handler a test sets per path, and counts
 * what reached it: TCP connections (before TLS), requests per path, and the SNI names seen.
 */
export interface DocumentServer {
  port: number;
  /** Origin for a hostname the test resolver maps to this server, e.g. https://client.example:PORT. */
  origin(hostname: string): string;
  route(path: string, handler: Handler): void;
  connections(): number;
  requests(path: string): number;
  serverNames(): string[];
  close(): Promise<void>;
}

export async function startDocumentServer(certificate: TestCertificate): Promise<DocumentServer> {
  const routes = new Map<string, Handler>();
  const requestCounts = new Map<string, number>();
  const serverNames: string[] = [];
  let connections = 0;

  const server: Server = createServer({ key: certificate.key, cert: certificate.cert }, (req, res) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    requestCounts.set(path, (requestCounts.get(path) ?? 0) + 1);
    // Set by Node on the server side from the client's SNI extension (not in @types/node).
    const servername = (req.socket as TLSSocket & { servername?: unknown }).servername;
    if (typeof servername === "string") serverNames.push(servername);
    const handler = routes.get(path);
    if (handler === undefined) {
      res.writeHead(404).end();
      return;
    }
    handler(req, res);
  });
  server.on("connection", () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    port,
    origin: (hostname) => `https://${hostname}:${port}`,
    route: (path, handler) => routes.set(path, handler),
    connections: () => connections,
    requests: (path) => requestCounts.get(path) ?? 0,
    serverNames: () => [...serverNames],
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A handler answering a JSON body with the given headers (Content-Type application/json unless overridden). */
export function json(body: unknown, headers: Record<string, string> = {}): Handler {
  return (_req, res) => {
    const text = JSON.stringify(body);
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
    res.end(text);
  };
}

/** A handler answering a redirect to `location`. */
export function redirect(location: string, status = 302): Handler {
  return (_req, res) => {
    res.writeHead(status, { location }).end();
  };
}
