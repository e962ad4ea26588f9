import { createServer, type Server } from "node:http";
import { Registry, collectDefaultMetrics } from "prom-client";
import type { Defer } from "./resources.js";

/** One Prometheus registry per service (standalone mode runs four, so none may be global). */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry, prefix: "threengram_" });
  return registry;
}

/**
 * Serves /metrics and /healthz on `port` for a service with no HTTP server of its own, closed with
 * the service (`defer`); port 0 serves nothing. A taken port fails the start.
 */
export async function serveMetrics(registry: Registry, port: number, defer: Defer): Promise<void> {
  if (port === 0) return;
  const server = await listenForMetrics(registry, port);
  defer(() => new Promise<void>((resolve) => server.close(() => resolve())));
}

function listenForMetrics(registry: Registry, port: number, host = "0.0.0.0"): Promise<Server> {
  const server = createServer(async (req, res) => {
    if (req.url === "/metrics") {
      res.setHeader("content-type", registry.contentType);
      res.end(await registry.metrics());
      return;
    }
    if (req.url === "/healthz") {
      res.end("ok");
      return;
    }
    res.statusCode = 404;
    res.end();
  });
  // A taken port must fail start-up with an error, not crash the process from an unhandled event.
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve(server);
    });
  });
}
