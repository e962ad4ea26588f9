/**
 * /health answers without I/O (the process is up); /ready asks each gRPC peer's health service over
 * the channel that serves its requests and answers 503 naming the peers that are not serving, so a
 * load balancer stops sending traffic.
 */
import type { ServingStatus } from "@3ngram/rpc";
import type { ReadinessOutput } from "@3ngram/schema";
import { Router } from "express";
import { routeLabel } from "./locals.js";

export type PeerChecks = Record<string, () => Promise<ServingStatus>>;

export function healthRouter(peers: PeerChecks): Router {
  const router = Router();
  router.get("/health", routeLabel("GET /health"), (_req, res) => {
    res.json({ status: "ok" });
  });
  router.get("/ready", routeLabel("GET /ready"), async (_req, res) => {
    const entries = await Promise.all(
      Object.entries(peers).map(async ([name, check]) => [name, await check().catch((): ServingStatus => "UNREACHABLE")] as const),
    );
    const notServing = entries.filter(([, status]) => status !== "SERVING").map(([name]) => name);
    const peerStatus = Object.fromEntries(entries);
    const body: ReadinessOutput = notServing.length === 0 ? { status: "ready", peers: peerStatus } : { status: "not_ready", notServing, peers: peerStatus };
    res.status(notServing.length === 0 ? 200 : 503).json(body);
  });
  return router;
}
