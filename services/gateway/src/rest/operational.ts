/**
 * The operational routes: no credential and no rate limit, so probes and scrapers always get an
 * answer. Mounted ahead of everything else; documented with the API under the "meta" tag.
 */
import { healthOutputSchema, readinessOutputSchema } from "@3ngram/schema";
import { readiness } from "../http/health.js";
import type { RestRoute } from "./route.js";

export const OPERATIONAL_ROUTES: readonly RestRoute[] = [
  {
    method: "get",
    path: "/health",
    summary: "liveness (no I/O)",
    tag: "meta",
    answers: { 200: { description: "up", json: healthOutputSchema } },
    handle: ({ res }) => res.json({ status: "ok" }),
  },
  {
    method: "get",
    path: "/ready",
    summary: "readiness: both gRPC peers serving",
    tag: "meta",
    answers: { 200: { description: "ready", json: readinessOutputSchema }, 503: { description: "a peer is not serving", json: readinessOutputSchema } },
    handle: async ({ res, peers }) => {
      const { status, body } = await readiness(peers);
      res.status(status).json(body);
    },
  },
  {
    method: "get",
    path: "/metrics",
    summary: "Prometheus metrics",
    tag: "meta",
    answers: { 200: { description: "text exposition format", media: { type: "text/plain", schema: { type: "string" } } } },
    handle: async ({ res, metrics }) => res.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  },
];
