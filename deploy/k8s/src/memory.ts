/** The memory service: the only writer. Reached over gRPC by the gateway and the consolidator. */
import type { KubeObject } from "./kube-object.js";
import { configMap, deployment, disruptionBudget, fromApps, fromMonitoring, ingressPolicy, service, tcp } from "./objects.js";
import { container } from "./pod.js";
import { grpcServerProbes } from "./probes.js";
import { EMBEDDINGS_CONFIG, LOG_CONFIG, QUEUE_CONFIG } from "./shared-config.js";
import { SECRETS, secretEnv } from "./secrets.js";
import { PORTS } from "./settings.js";

export const MEMORY_CONFIG: Record<string, string> = {
  GRPC_HOST: "0.0.0.0",
  GRPC_PORT: String(PORTS.memoryGrpc),
  METRICS_PORT: String(PORTS.memoryMetrics),
  // The migration Job applies the schema as its owner; the runtime login cannot.
  MIGRATE_ON_START: "false",
  RUNTIME_DB_ROLE: "threengram_app",
  DATABASE_POOL_MAX: "10",
  EMBED_INLINE_BUDGET_MS: "2000",
  // New replicas get traffic as clients' connections reach this age and resolve the name again.
  GRPC_MAX_CONNECTION_AGE_MS: "300000",
  ...QUEUE_CONFIG,
  ...EMBEDDINGS_CONFIG,
  ...LOG_CONFIG,
};

export function memoryObjects(): KubeObject[] {
  const memory = container({
    name: "memory",
    script: "services/memory/dist/main.js",
    ports: [
      { name: "grpc", containerPort: PORTS.memoryGrpc, protocol: "TCP" },
      { name: "metrics", containerPort: PORTS.memoryMetrics, protocol: "TCP" },
    ],
    configMap: "memory-config",
    env: [secretEnv(SECRETS.trustedKeys), secretEnv(SECRETS.memoryDatabase), secretEnv(SECRETS.redis)],
    // The bundled embedding model takes ~175 MiB resident once loaded.
    resources: { requests: { cpu: "250m", memory: "384Mi" }, limits: { cpu: "1", memory: "1Gi" } },
    probes: grpcServerProbes(PORTS.memoryGrpc),
  });
  return [
    configMap("memory", MEMORY_CONFIG),
    deployment({ app: "memory", container: memory, config: MEMORY_CONFIG, replicas: 2, metricsPort: PORTS.memoryMetrics, spread: true }),
    service(
      "memory",
      [
        { name: "grpc", port: PORTS.memoryGrpc, targetPort: "grpc", protocol: "TCP", appProtocol: "grpc" },
        { name: "metrics", port: PORTS.memoryMetrics, targetPort: "metrics", protocol: "TCP" },
      ],
      true,
    ),
    disruptionBudget("memory"),
    ingressPolicy("memory", [
      { from: fromApps("gateway", "consolidator"), ports: [tcp(PORTS.memoryGrpc)] },
      { from: fromMonitoring(), ports: [tcp(PORTS.memoryMetrics)] },
    ]),
  ];
}
