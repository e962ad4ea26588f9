import { describe, expect, it } from "vitest";
import { MONITORING_NAMESPACE, NAMESPACE } from "../src/index.js";
import { allows, type Source, type Target } from "./network-oracle.js";
import { inKustomization, loadRendered, ofKind, onlyContainer, type DeploymentDoc, type JobDoc, type NetworkPolicyDoc } from "./rendered.js";

const docs = loadRendered();
const deployments = ofKind<DeploymentDoc>(docs, "Deployment");
const jobs = ofKind<JobDoc>(docs, "Job");
const policies = ofKind<NetworkPolicyDoc>(docs.filter(inKustomization), "NetworkPolicy");

const namespaceLabels = (name: string) => ({ "kubernetes.io/metadata.name": name });

const sources: Record<string, Source> = {
  internet: { kind: "external", ip: "203.0.113.7" },
  monitoring: { kind: "pod", namespace: MONITORING_NAMESPACE, namespaceLabels: namespaceLabels(MONITORING_NAMESPACE), labels: { app: "prometheus" } },
  // Same label as our gateway, wrong namespace: must get no further than the public port.
  "other-namespace": { kind: "pod", namespace: "default", namespaceLabels: namespaceLabels("default"), labels: { app: "gateway" } },
};
for (const workload of [...deployments, ...jobs]) {
  sources[workload.metadata.name] = {
    kind: "pod",
    namespace: NAMESPACE,
    namespaceLabels: namespaceLabels(NAMESPACE),
    labels: workload.spec!.template.metadata!.labels!,
  };
}

/** Every port of every pod we run ("name:port"), with who may connect to it. */
function reachability(withPolicies: NetworkPolicyDoc[]): Record<string, string[]> {
  const table: Record<string, string[]> = {};
  for (const workload of [...deployments, ...jobs]) {
    const container = onlyContainer(workload);
    const portNames = Object.fromEntries((container.ports ?? []).filter((p) => p.name).map((p) => [p.name!, p.containerPort]));
    // A pod with no declared ports (the Job) is probed on an arbitrary one.
    const ports = container.ports?.map((p) => p.containerPort) ?? [8080];
    for (const port of ports) {
      const target: Target = { namespace: NAMESPACE, labels: workload.spec!.template.metadata!.labels!, port, portNames };
      table[`${workload.metadata.name}:${port}`] = Object.entries(sources)
        .filter(([, source]) => allows(withPolicies, source, target))
        .map(([name]) => name)
        .sort();
    }
  }
  return table;
}

describe("network policies", () => {
  const everyone = Object.keys(sources).sort();

  it("expose only the gateway's HTTP port outside the namespace; memory and search take calls from their real callers only", () => {
    expect(reachability(policies)).toEqual({
      "gateway:8080": everyone,
      // Who calls memory and search: services/gateway/src/clients and services/consolidator/src/consolidator.ts.
      "memory:50051": ["consolidator", "gateway"],
      "memory:9101": ["monitoring"],
      "search:50052": ["consolidator", "gateway"],
      "search:9102": ["monitoring"],
      "consolidator:9103": ["monitoring"],
      "migrate:8080": [],
    });
  });

  it("deny by default: without the namespace-wide policy the migration pod would be open to all", () => {
    const withoutDefault = policies.filter((p) => p.metadata.name !== "default-deny-ingress");
    expect(withoutDefault.length).toBe(policies.length - 1);
    expect(reachability(withoutDefault)["migrate:8080"]).toEqual(everyone);
  });
});
