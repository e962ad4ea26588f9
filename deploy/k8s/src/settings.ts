/**
 * Names, ports and labels every manifest shares. The ports here must match each service's config
 * defaults only because the ConfigMaps set them explicitly from these constants; the tests parse
 * the rendered environment with the services' own config loaders.
 */

export const NAMESPACE = "3ngram";
/** Prometheus (or any scraper) lives here; only it may reach the metrics ports. */
export const MONITORING_NAMESPACE = "monitoring";

/** One image runs every service; kustomize's `images:` (or an overlay) sets the registry and tag. */
export const IMAGE = "3ngram";
export const IMAGE_TAG = "0.1.0";
/** The `node` user of the node:*-slim base image; the Dockerfile switches to it by number. */
export const RUN_AS_USER = 1000;

export const SERVICE_NAMES = ["gateway", "memory", "search", "consolidator"] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

export const PORTS = {
  gatewayHttp: 8080,
  memoryGrpc: 50051,
  memoryMetrics: 9101,
  searchGrpc: 50052,
  searchMetrics: 9102,
  consolidatorMetrics: 9103,
} as const;

/**
 * Peer addresses for grpc-js: the dns resolver returns every pod behind the headless Service and
 * the client's round_robin policy spreads calls over them. A short name keeps working when an
 * overlay moves everything to another namespace (the pod's DNS search path completes it).
 */
export const MEMORY_ADDR = `dns:///memory:${PORTS.memoryGrpc}`;
export const SEARCH_ADDR = `dns:///search:${PORTS.searchGrpc}`;

export const PART_OF = "3ngram";

/** The selector label: `app=<service>`, like the directory and the Deployment. */
export function selectorLabels(app: string): Record<string, string> {
  return { app };
}

export function labels(app: string, component: string): Record<string, string> {
  return {
    ...selectorLabels(app),
    "app.kubernetes.io/name": app,
    "app.kubernetes.io/component": component,
    "app.kubernetes.io/part-of": PART_OF,
  };
}
