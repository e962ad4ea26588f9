import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface AuthProxy {
  /** Base URL the proxy listens on, e.g. http://[::1]:41234. */
  url: string;
  close(): Promise<void>;
}

export interface AuthProxyOptions {
  /** Where every request goes, e.g. the gateway's http://127.0.0.1:41234. */
  upstream: string;
  /** Added as `Authorization: Bearer <token>` to requests that carry none. */
  token: string;
  /** Listening address and port (default 127.0.0.1, any free port). */
  host?: string;
  port?: number;
}

/**
 * A loopback reverse proxy that adds `Authorization: Bearer <token>` to every request that has
 * none, for clients that cannot send one (the MCP conformance suite). Everything else passes
 * through unchanged in both directions, streamed (SSE answers arrive as they are written), the
 * Host and Origin headers included.
 */
export async function startAuthProxy(options: AuthProxyOptions): Promise<AuthProxy> {
  const upstream = new URL(options.upstream);
  const { token } = options;
  const server: Server = createServer((req, res) => {
    const headers = { ...req.headers, ...(req.headers.authorization === undefined ? { authorization: `Bearer ${token}` } : {}) };
    const forwarded = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forwarded.on("error", () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    res.on("close", () => forwarded.destroy());
    req.pipe(forwarded);
  });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
