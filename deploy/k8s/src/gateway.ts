/** The gateway: the only service reachable from outside the namespace (MCP, REST, /metrics). */
import type { KubeObject } from "./kube-object.js";
import { configMap, deployment, disruptionBudget, ingressPolicy, service, tcp } from "./objects.js";
import { container } from "./pod.js";
import { LOG_CONFIG } from "./shared-config.js";
import { SECRETS, secretEnv } from "./secrets.js";
import { MEMORY_ADDR, PORTS, SEARCH_ADDR } from "./settings.js";

export const GATEWAY_CONFIG: Record<string, string> = {
  HOST: "0.0.0.0",
  PORT: String(PORTS.gatewayHttp),
  MEMORY_ADDR,
  SEARCH_ADDR,
  // Fill these in for your deployment (an empty value means unset).
  // PUBLIC_URL is also the OAuth issuer: set it, identically on every replica.
  PUBLIC_URL: "",
  MCP_ALLOWED_ORIGINS: "",
  // Behind one ingress or load balancer that sets X-Forwarded-For: "1". Without a proxy in front,
  // keep "false" or any client could pick the address the per-IP limit counts.
  TRUST_PROXY: "false",
  ...LOG_CONFIG,
};

export function gatewayObjects(): KubeObject[] {
  const gateway = container({
    name: "gateway",
    script: "services/gateway/dist/main.js",
    ports: [{ name: "http", containerPort: PORTS.gatewayHttp, protocol: "TCP" }],
    configMap: "gateway-config",
    // REDIS_URL: the rate limits are counted there, shared by every replica. UI_SESSION_SECRET: a
    // review UI session started on one replica must verify on the others.
    env: [secretEnv(SECRETS.signingKey), secretEnv(SECRETS.redis), secretEnv(SECRETS.uiSession)],
    resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { cpu: "1", memory: "512Mi" } },
    probes: {
      // /health does no I/O: it fails only when the process is stuck.
      livenessProbe: { httpGet: { path: "/health", port: "http" }, periodSeconds: 10, timeoutSeconds: 2, failureThreshold: 3 },
      // /ready asks memory and search for their gRPC health, so a gateway cut off from them leaves the pool.
      readinessProbe: { httpGet: { path: "/ready", port: "http" }, periodSeconds: 5, timeoutSeconds: 3, failureThreshold: 2 },
    },
    // Keep serving while the Service's endpoints drop this pod, then take SIGTERM.
    lifecycle: { preStop: { exec: { command: ["sleep", "5"] } } },
  });
  return [
    configMap("gateway", GATEWAY_CONFIG),
    deployment({ app: "gateway", container: gateway, config: GATEWAY_CONFIG, replicas: 2, metricsPort: PORTS.gatewayHttp, spread: true }),
    service("gateway", [{ name: "http", port: 80, targetPort: "http", protocol: "TCP" }], false),
    disruptionBudget("gateway"),
    // No `from`: any source, inside or outside the cluster, may reach the HTTP port.
    ingressPolicy("gateway", [{ ports: [tcp(PORTS.gatewayHttp)] }]),
  ];
}
