import { createServer, type Server } from "node:http";
import { Registry, collectDefaultMetrics } from "prom-client";

/** One Prometheus registry per service (standalone mode runs four, so none may be global). */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry, prefix: "threengram_" });
  return registry;
}

/** A tiny HTTP listener serving /metrics and /healthz for services that have no HTTP server of their own. */
export function serveMetrics(registry: Registry, port: number, host = "0.0.0.0"): Promise<Server> {
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
