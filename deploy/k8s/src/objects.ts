/** Small constructors for the objects each service needs, so a service file states only what differs. */
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import type { IDeploymentSpec } from "kubernetes-models/apps/v1/DeploymentSpec";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import type { IContainer } from "kubernetes-models/v1/Container";
import type { IPodSpec } from "kubernetes-models/v1/PodSpec";
import { Service } from "kubernetes-models/v1/Service";
import type { IServicePort } from "kubernetes-models/v1/ServicePort";
import type { INetworkPolicyIngressRule } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicyIngressRule";
import type { INetworkPolicyPeer } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicyPeer";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { configChecksum, podSpec, scrapeAnnotations } from "./pod.js";
import { MONITORING_NAMESPACE, NAMESPACE, labels, selectorLabels, type ServiceName } from "./settings.js";

export function configMap(app: ServiceName, data: Record<string, string>): ConfigMap {
  return new ConfigMap({ metadata: { name: `${app}-config`, namespace: NAMESPACE, labels: labels(app, "config") }, data });
}

export interface DeploymentInput {
  app: ServiceName;
  container: IContainer;
  config: Record<string, string>;
  /** Omitted when an HPA owns the count, so `kubectl apply` does not reset it. */
  replicas?: number;
  metricsPort: number;
  terminationGracePeriodSeconds?: number;
  /** Spread replicas over nodes so one node going down leaves the others serving. */
  spread?: boolean;
}

export function deployment(input: DeploymentInput): Deployment {
  const extra: Partial<IPodSpec> = {};
  if (input.terminationGracePeriodSeconds !== undefined) extra.terminationGracePeriodSeconds = input.terminationGracePeriodSeconds;
  if (input.spread) {
    extra.topologySpreadConstraints = [
      { maxSkew: 1, topologyKey: "kubernetes.io/hostname", whenUnsatisfiable: "ScheduleAnyway", labelSelector: { matchLabels: selectorLabels(input.app) } },
    ];
  }
  const spec: IDeploymentSpec = {
    ...(input.replicas !== undefined ? { replicas: input.replicas } : {}),
    selector: { matchLabels: selectorLabels(input.app) },
    // Surge first: a rollout never drops below the current count of ready pods.
    strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
    template: {
      metadata: {
        labels: labels(input.app, "server"),
        annotations: { ...scrapeAnnotations(input.metricsPort), ...configChecksum(input.config) },
      },
      spec: podSpec([input.container], extra),
    },
  };
  return new Deployment({ metadata: { name: input.app, namespace: NAMESPACE, labels: labels(input.app, "server") }, spec });
}

/**
 * `headless` gives every pod its own DNS record, so grpc-js sees all of them and round-robins;
 * a ClusterIP would pin each long-lived HTTP/2 connection to one pod.
 */
export function service(app: ServiceName, ports: IServicePort[], headless: boolean): Service {
  return new Service({
    metadata: { name: app, namespace: NAMESPACE, labels: labels(app, "server") },
    spec: {
      ...(headless ? { clusterIP: "None" } : { type: "ClusterIP" }),
      selector: selectorLabels(app),
      ports,
    },
  });
}

export function disruptionBudget(app: ServiceName): PodDisruptionBudget {
  return new PodDisruptionBudget({
    metadata: { name: app, namespace: NAMESPACE, labels: labels(app, "server") },
    spec: { minAvailable: 1, selector: { matchLabels: selectorLabels(app) } },
  });
}

/** Pods of these services, in this namespace. */
export function fromApps(...apps: ServiceName[]): INetworkPolicyPeer[] {
  return [{ podSelector: { matchExpressions: [{ key: "app", operator: "In", values: apps }] } }];
}

/** Any pod of the monitoring namespace (the label is set by Kubernetes on every namespace). */
export function fromMonitoring(): INetworkPolicyPeer[] {
  return [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": MONITORING_NAMESPACE } } }];
}

export function tcp(port: number): NonNullable<INetworkPolicyIngressRule["ports"]>[number] {
  return { protocol: "TCP", port };
}

/** What may connect to this service's pods; anything not listed is refused (default-deny). */
export function ingressPolicy(app: ServiceName, rules: INetworkPolicyIngressRule[]): NetworkPolicy {
  return new NetworkPolicy({
    metadata: { name: `${app}-ingress`, namespace: NAMESPACE, labels: labels(app, "network-policy") },
    spec: { podSelector: { matchLabels: selectorLabels(app) }, policyTypes: ["Ingress"], ingress: rules },
  });
}
