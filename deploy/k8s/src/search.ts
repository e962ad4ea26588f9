/** The search service: read-only, CPU-bound (query embedding and ranking), scaled by an HPA. */
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler";
import type { KubeObject } from "./kube-object.js";
import { configMap, deployment, disruptionBudget, fromApps, fromMonitoring, ingressPolicy, service, tcp } from "./objects.js";
import { container } from "./pod.js";
import { grpcServerProbes } from "./probes.js";
import { EMBEDDINGS_CONFIG, LOG_CONFIG } from "./shared-config.js";
import { SECRETS, secretEnv } from "./secrets.js";
import { NAMESPACE, PORTS, labels } from "./settings.js";

export const SEARCH_CONFIG: Record<string, string> = {
  GRPC_HOST: "0.0.0.0",
  GRPC_PORT: String(PORTS.searchGrpc),
  METRICS_PORT: String(PORTS.searchMetrics),
  SEARCH_DB_ROLE: "threengram_search",
  DATABASE_POOL_MAX: "10",
  QUERY_EMBED_BUDGET_MS: "2000",
  QUERY_EMBED_CACHE_SIZE: "1000",
  // Bounds how long a pod the HPA adds waits for traffic from gateways already connected.
  GRPC_MAX_CONNECTION_AGE_MS: "300000",
  ...EMBEDDINGS_CONFIG,
  ...LOG_CONFIG,
};

export const SEARCH_SCALING = { minReplicas: 2, maxReplicas: 10, cpuUtilization: 70 } as const;

export function searchObjects(): KubeObject[] {
  const search = container({
    name: "search",
    script: "services/search/dist/main.js",
    ports: [
      { name: "grpc", containerPort: PORTS.searchGrpc, protocol: "TCP" },
      { name: "metrics", containerPort: PORTS.searchMetrics, protocol: "TCP" },
    ],
    configMap: "search-config",
    env: [secretEnv(SECRETS.trustedKeys), secretEnv(SECRETS.searchDatabase)],
    // The HPA scales on CPU as a share of this request.
    resources: { requests: { cpu: "500m", memory: "384Mi" }, limits: { cpu: "1", memory: "1Gi" } },
    probes: grpcServerProbes(PORTS.searchGrpc),
  });
  return [
    configMap("search", SEARCH_CONFIG),
    // No replicas: the HPA owns the count.
    deployment({ app: "search", container: search, config: SEARCH_CONFIG, metricsPort: PORTS.searchMetrics, spread: true }),
    service(
      "search",
      [
        { name: "grpc", port: PORTS.searchGrpc, targetPort: "grpc", protocol: "TCP", appProtocol: "grpc" },
        { name: "metrics", port: PORTS.searchMetrics, targetPort: "metrics", protocol: "TCP" },
      ],
      true,
    ),
    new HorizontalPodAutoscaler({
      metadata: { name: "search", namespace: NAMESPACE, labels: labels("search", "autoscaler") },
      spec: {
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "search" },
        minReplicas: SEARCH_SCALING.minReplicas,
        maxReplicas: SEARCH_SCALING.maxReplicas,
        metrics: [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: SEARCH_SCALING.cpuUtilization } } }],
        // Scale up at once, scale down only after five calm minutes (new pods get traffic as
        // clients reconnect within the servers' 5-minute max connection age).
        behavior: { scaleDown: { stabilizationWindowSeconds: 300 } },
      },
    }),
    disruptionBudget("search"),
    ingressPolicy("search", [
      { from: fromApps("gateway", "consolidator"), ports: [tcp(PORTS.searchGrpc)] },
      { from: fromMonitoring(), ports: [tcp(PORTS.searchMetrics)] },
    ]),
  ];
}
