/** The consolidator: a BullMQ worker. It takes no requests; only the monitoring namespace reaches it. */
import type { KubeObject } from "./kube-object.js";
import { configMap, deployment, fromMonitoring, ingressPolicy, service, tcp } from "./objects.js";
import { container } from "./pod.js";
import { metricsOnlyProbes } from "./probes.js";
import { EMBEDDINGS_CONFIG, LOG_CONFIG, QUEUE_CONFIG } from "./shared-config.js";
import { SECRETS, secretEnv } from "./secrets.js";
import { MEMORY_ADDR, PORTS, SEARCH_ADDR } from "./settings.js";

export const CONSOLIDATOR_CONFIG: Record<string, string> = {
  MEMORY_ADDR,
  SEARCH_ADDR,
  METRICS_PORT: String(PORTS.consolidatorMetrics),
  WORKER_CONCURRENCY: "2",
  JOB_LOCK_MS: "30000",
  FACT_EXTRACTOR: "rules",
  COMMITMENT_EXPIRY_GRACE_HOURS: "24",
  ...QUEUE_CONFIG,
  ...EMBEDDINGS_CONFIG,
  ...LOG_CONFIG,
};

/** services/consolidator/src/main.ts waits up to 60 s for running jobs; Kubernetes must wait longer. */
export const CONSOLIDATOR_GRACE_SECONDS = 90;

export function consolidatorObjects(): KubeObject[] {
  const consolidator = container({
    name: "consolidator",
    script: "services/consolidator/dist/main.js",
    ports: [{ name: "metrics", containerPort: PORTS.consolidatorMetrics, protocol: "TCP" }],
    configMap: "consolidator-config",
    env: [secretEnv(SECRETS.signingKey), secretEnv(SECRETS.redis)],
    // It loads the embedding model too (embedding retries and backfill).
    resources: { requests: { cpu: "100m", memory: "384Mi" }, limits: { cpu: "1", memory: "1Gi" } },
    probes: metricsOnlyProbes(),
  });
  return [
    configMap("consolidator", CONSOLIDATOR_CONFIG),
    // One worker is enough to start; BullMQ lets more share the queues (raise replicas).
    deployment({
      app: "consolidator",
      container: consolidator,
      config: CONSOLIDATOR_CONFIG,
      replicas: 1,
      metricsPort: PORTS.consolidatorMetrics,
      terminationGracePeriodSeconds: CONSOLIDATOR_GRACE_SECONDS,
    }),
    // Headless, only so scrapers that discover targets through Services find the pods.
    service("consolidator", [{ name: "metrics", port: PORTS.consolidatorMetrics, targetPort: "metrics", protocol: "TCP" }], true),
    ingressPolicy("consolidator", [{ from: fromMonitoring(), ports: [tcp(PORTS.consolidatorMetrics)] }]),
  ];
}
