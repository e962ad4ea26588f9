import type { IContainer } from "kubernetes-models/v1/Container";

/**
 * Probes for memory and search. Liveness asks the metrics listener's /healthz (no I/O), so a
 * database outage never restarts pods; readiness is the native gRPC probe against
 * grpc.health.v1 (overall status ""), which the server sets NOT_SERVING while its database is
 * unreachable, so traffic moves to pods that can answer. The metrics listener starts last, after
 * the model is loaded and the gRPC port is bound, which makes it a fair startup signal too.
 */
export function grpcServerProbes(grpcPort: number): Pick<IContainer, "livenessProbe" | "readinessProbe" | "startupProbe"> {
  return {
    startupProbe: { httpGet: { path: "/healthz", port: "metrics" }, periodSeconds: 5, timeoutSeconds: 2, failureThreshold: 36 },
    livenessProbe: { httpGet: { path: "/healthz", port: "metrics" }, periodSeconds: 10, timeoutSeconds: 2, failureThreshold: 3 },
    readinessProbe: { grpc: { port: grpcPort }, periodSeconds: 5, timeoutSeconds: 2, failureThreshold: 2 },
  };
}

/** For a process that serves nothing but /metrics and /healthz (the consolidator). */
export function metricsOnlyProbes(): Pick<IContainer, "livenessProbe" | "readinessProbe" | "startupProbe"> {
  return {
    startupProbe: { httpGet: { path: "/healthz", port: "metrics" }, periodSeconds: 5, timeoutSeconds: 2, failureThreshold: 36 },
    livenessProbe: { httpGet: { path: "/healthz", port: "metrics" }, periodSeconds: 10, timeoutSeconds: 2, failureThreshold: 3 },
    readinessProbe: { httpGet: { path: "/healthz", port: "metrics" }, periodSeconds: 10, timeoutSeconds: 2, failureThreshold: 3 },
  };
}
