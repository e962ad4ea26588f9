import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler";
import { Job } from "kubernetes-models/batch/v1/Job";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Namespace } from "kubernetes-models/v1/Namespace";
import { Secret } from "kubernetes-models/v1/Secret";
import { Service } from "kubernetes-models/v1/Service";
import type { IHorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler";
import type { IPodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import type { ISecret } from "kubernetes-models/v1/Secret";
import { MEMORY_ADDR, NAMESPACE, RUN_AS_USER, SEARCH_ADDR, SERVICE_NAMES, renderAll } from "../src/index.js";
import {
  K8S_DIR,
  REPO_ROOT,
  byName,
  committedYamlFiles,
  containerPort,
  inKustomization,
  loadRendered,
  ofKind,
  onlyContainer,
  type ConfigMapDoc,
  type DeploymentDoc,
  type Doc,
  type JobDoc,
  type ServiceDoc,
} from "./rendered.js";

const docs = loadRendered();
const deployments = ofKind<DeploymentDoc>(docs, "Deployment");
const services = ofKind<ServiceDoc>(docs, "Service");
const configMaps = ofKind<ConfigMapDoc>(docs, "ConfigMap");
const jobs = ofKind<JobDoc>(docs, "Job");

/** The kubernetes-models class for each kind we ship; a kind missing here fails the validation test. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  "v1/Namespace": Namespace,
  "v1/ConfigMap": ConfigMap,
  "v1/Secret": Secret,
  "v1/Service": Service,
  "apps/v1/Deployment": Deployment,
  "batch/v1/Job": Job,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "autoscaling/v2/HorizontalPodAutoscaler": HorizontalPodAutoscaler,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
};

function validate(doc: Doc): void {
  const Model = MODELS[`${doc.apiVersion}/${doc.kind}`];
  if (!Model) throw new Error(`no model for ${doc.apiVersion} ${doc.kind}`);
  const { apiVersion: _a, kind: _k, ...data } = doc;
  new Model(data as never).validate();
}

describe("rendered manifests", () => {
  it("are exactly what a fresh render produces, with no stray files", () => {
    const fresh = renderAll();
    expect(committedYamlFiles()).toEqual([...fresh.keys()].sort());
    for (const [path, text] of fresh) expect(readFileSync(join(K8S_DIR, path), "utf8"), path).toBe(text);
  });

  it("validate against the Kubernetes API schema, every object", () => {
    expect(docs.length).toBeGreaterThan(20);
    for (const { file, doc } of docs) {
      expect(() => validate(doc), `${file}: ${doc.kind} ${doc.metadata.name}`).not.toThrow();
    }
    // The validator is not a no-op: a Deployment without containers is refused.
    const broken = structuredClone(byName(deployments, "search"));
    broken.spec!.template.spec!.containers = [{} as never];
    expect(() => validate(broken)).toThrow();
  });

  it("put every namespaced object in the 3ngram namespace", () => {
    for (const { file, doc } of docs) {
      if (doc.kind === "Namespace") expect(doc.metadata.name).toBe(NAMESPACE);
      else expect(doc.metadata.namespace, `${file}: ${doc.kind} ${doc.metadata.name}`).toBe(NAMESPACE);
    }
  });

  it("list every manifests/ file in the kustomization, and neither the Job nor the Secret templates", () => {
    const kustomization = parse(readFileSync(join(K8S_DIR, "manifests/kustomization.yaml"), "utf8")) as {
      resources: string[];
      images: Array<{ name: string }>;
    };
    const listed = kustomization.resources.map((r) => `manifests/${r}`).sort();
    const files = [...new Set(docs.filter(inKustomization).map((d) => d.file))].sort();
    expect(listed).toEqual(files);
    expect(docs.filter(inKustomization).some((d) => d.doc.kind === "Job" || d.doc.kind === "Secret")).toBe(false);
    const images = new Set([...deployments, ...jobs].map((w) => onlyContainer(w).image!.split(":")[0]));
    expect(kustomization.images.map((i) => i.name)).toEqual([...images]);
  });
});

describe("workloads", () => {
  it("run one Deployment per service, each starting that service's built entry point", () => {
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual([...SERVICE_NAMES].sort());
    for (const name of SERVICE_NAMES) {
      const command = onlyContainer(byName(deployments, name)).command!;
      expect(command).toEqual(["node", `services/${name}/dist/main.js`]);
      // The image's working directory is the repository root, built; so is this checkout.
      expect(existsSync(join(REPO_ROOT, command[1]!)), command[1]).toBe(true);
    }
  });

  it("give every container resources and a locked-down, non-root security context", () => {
    for (const workload of [...deployments, ...jobs]) {
      const name = workload.metadata.name;
      const pod = workload.spec!.template.spec!;
      expect(pod.securityContext?.runAsNonRoot, name).toBe(true);
      expect(pod.securityContext?.runAsUser, name).toBeGreaterThan(0);
      expect(pod.automountServiceAccountToken, name).toBe(false);
      const container = onlyContainer(workload);
      expect(container.securityContext, name).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ["ALL"] },
      });
      for (const kind of ["requests", "limits"] as const) {
        expect(container.resources?.[kind]?.cpu, `${name} cpu ${kind}`).toBeTruthy();
        expect(container.resources?.[kind]?.memory, `${name} memory ${kind}`).toBeTruthy();
      }
    }
  });

  it("run as the user the Dockerfile switches to", () => {
    const dockerfile = readFileSync(join(REPO_ROOT, "Dockerfile"), "utf8");
    const users = [...dockerfile.matchAll(/^USER\s+(\d+)(?::(\d+))?\s*$/gm)];
    expect(users.length).toBeGreaterThan(0);
    expect(Number(users.at(-1)![1])).toBe(RUN_AS_USER);
    for (const workload of [...deployments, ...jobs]) expect(workload.spec!.template.spec!.securityContext?.runAsUser).toBe(RUN_AS_USER);
  });

  it("run commands the Dockerfile's image contains: each service built, the migrations copied", () => {
    const dockerfile = readFileSync(join(REPO_ROOT, "Dockerfile"), "utf8");
    const built = /^RUN npx tsc -b (.+)$/m.exec(dockerfile)?.[1]?.split(/\s+/) ?? [];
    for (const workload of [...deployments, ...jobs]) {
      const script = onlyContainer(workload).command![1]!;
      const workspace = /^(services\/[a-z]+)\/dist\//.exec(script)?.[1];
      expect(built, `${workload.metadata.name}: ${script}`).toContain(workspace);
    }
    expect(dockerfile).toContain("cp -a services/memory/migrations /out/services/memory/");
    expect(dockerfile).toMatch(/^FROM node:24-slim|^ARG NODE_IMAGE=node:24-slim$/m);
  });

  it("give every Deployment liveness and readiness probes on ports the container declares", () => {
    for (const deployment of deployments) {
      const container = onlyContainer(deployment);
      expect(container.livenessProbe, `${deployment.metadata.name} liveness`).toBeDefined();
      expect(container.readinessProbe, `${deployment.metadata.name} readiness`).toBeDefined();
      const probes = [container.livenessProbe, container.readinessProbe, ...(container.startupProbe ? [container.startupProbe] : [])];
      for (const probe of probes) {
        const port = probe!.httpGet?.port ?? probe!.grpc?.port ?? probe!.tcpSocket?.port;
        expect(port, deployment.metadata.name).toBeDefined();
        expect(containerPort(container, port!), `${deployment.metadata.name} probe port ${port}`).toBeDefined();
      }
    }
  });

  it("probe memory and search readiness with native gRPC health checks, the gateway with /health and /ready", () => {
    for (const name of ["memory", "search"]) {
      const container = onlyContainer(byName(deployments, name));
      expect(container.readinessProbe?.grpc?.port).toBe(containerPort(container, "grpc"));
      // Liveness must not follow the database (a database outage would restart every pod).
      expect(container.livenessProbe?.grpc).toBeUndefined();
      expect(container.livenessProbe?.httpGet?.path).toBe("/healthz");
    }
    const gateway = onlyContainer(byName(deployments, "gateway"));
    expect(gateway.livenessProbe?.httpGet?.path).toBe("/health");
    expect(gateway.readinessProbe?.httpGet?.path).toBe("/ready");
  });

  it("annotate pods for Prometheus on the port that serves /metrics", () => {
    for (const deployment of deployments) {
      const annotations = deployment.spec!.template.metadata!.annotations!;
      expect(annotations["prometheus.io/scrape"]).toBe("true");
      const container = onlyContainer(deployment);
      const expected = containerPort(container, "metrics") ?? containerPort(container, "http");
      expect(Number(annotations["prometheus.io/port"]), deployment.metadata.name).toBe(expected);
    }
  });

  it("let the consolidator finish its running jobs before Kubernetes kills it", () => {
    const main = readFileSync(join(REPO_ROOT, "services/consolidator/src/main.ts"), "utf8");
    const graceMs = Number(/SHUTDOWN_GRACE_MS = ([\d_]+)/.exec(main)![1]!.replaceAll("_", ""));
    const pod = byName(deployments, "consolidator").spec!.template.spec!;
    expect(pod.terminationGracePeriodSeconds! * 1000).toBeGreaterThan(graceMs);
  });

  it("run the migration Job as the memory service's migrate CLI with the migration database URL", () => {
    expect(jobs).toHaveLength(1);
    const container = onlyContainer(jobs[0]!);
    expect(container.command).toEqual(["node", "services/memory/dist/cli.js", "migrate"]);
    expect(existsSync(join(REPO_ROOT, "services/memory/dist/cli.js"))).toBe(true);
    expect(container.env).toEqual([{ name: "DATABASE_URL", valueFrom: { secretKeyRef: { name: "migration-database-url", key: "DATABASE_URL" } } }]);
    expect(jobs[0]!.spec!.template.spec!.restartPolicy).toBe("Never");
    // The runtime pods never migrate: their login role cannot, and the Job owns it.
    expect(byName(configMaps, "memory-config").data!.MIGRATE_ON_START).toBe("false");
  });
});

describe("services and peers", () => {
  it("select each Deployment's pods and name only ports the container declares", () => {
    for (const svc of services) {
      const deployment = byName(deployments, svc.metadata.name);
      const podLabels = deployment.spec!.template.metadata!.labels!;
      expect(
        Object.entries(svc.spec!.selector!).every(([k, v]) => podLabels[k] === v),
        svc.metadata.name,
      ).toBe(true);
      for (const port of svc.spec!.ports!) {
        expect(containerPort(onlyContainer(deployment), port.targetPort!), `${svc.metadata.name}:${port.name}`).toBeDefined();
      }
    }
  });

  it("make memory and search headless, and point every gRPC address at them with dns:///", () => {
    for (const name of ["memory", "search"]) expect(byName(services, name).spec!.clusterIP, name).toBe("None");
    expect(byName(services, "gateway").spec!.clusterIP).toBeUndefined();
    const addresses = configMaps.flatMap((cm) => Object.entries(cm.data ?? {}).filter(([key]) => key.endsWith("_ADDR")));
    expect(addresses.map(([key]) => key).sort()).toEqual(["MEMORY_ADDR", "MEMORY_ADDR", "SEARCH_ADDR", "SEARCH_ADDR"]);
    for (const [key, address] of addresses) {
      const match = /^dns:\/\/\/([a-z0-9-]+)(?:\.[a-z0-9.-]+)?:(\d+)$/.exec(address);
      expect(match, address).not.toBeNull();
      const svc = byName(services, match![1]!);
      expect(svc.metadata.name).toBe(key === "MEMORY_ADDR" ? "memory" : "search");
      expect(svc.spec!.clusterIP).toBe("None");
      // A headless Service has no port mapping: clients dial the pod's own container port.
      const grpcPort = svc.spec!.ports!.find((p) => p.name === "grpc")!;
      expect(Number(match![2])).toBe(containerPort(onlyContainer(byName(deployments, svc.metadata.name)), grpcPort.targetPort!));
    }
    expect([MEMORY_ADDR, SEARCH_ADDR]).toEqual(expect.arrayContaining(addresses.map(([, a]) => a)));
  });

  it("scale search with an autoscaling/v2 HPA on CPU, and leave its replica count to it", () => {
    const hpas = ofKind<IHorizontalPodAutoscaler>(docs, "HorizontalPodAutoscaler");
    expect(hpas).toHaveLength(1);
    const hpa = hpas[0]!;
    expect(hpa.apiVersion).toBe("autoscaling/v2");
    expect(hpa.spec!.scaleTargetRef).toEqual({ apiVersion: "apps/v1", kind: "Deployment", name: "search" });
    expect(hpa.spec!.minReplicas).toBeGreaterThanOrEqual(2);
    expect(hpa.spec!.maxReplicas).toBeGreaterThan(hpa.spec!.minReplicas!);
    expect(hpa.spec!.metrics!.some((m) => m.resource?.name === "cpu")).toBe(true);
    const search = byName(deployments, "search");
    expect(search.spec!.replicas).toBeUndefined();
    expect(onlyContainer(search).resources?.requests?.cpu).toBeTruthy();
  });

  it("keep a pod of each request-serving service through voluntary disruptions", () => {
    const budgets = ofKind<IPodDisruptionBudget>(docs, "PodDisruptionBudget");
    const hpa = ofKind<IHorizontalPodAutoscaler>(docs, "HorizontalPodAutoscaler")[0]!;
    for (const name of ["gateway", "memory", "search"]) {
      const budget = byName(budgets, name);
      const deployment = byName(deployments, name);
      expect(budget.spec!.selector!.matchLabels).toEqual(deployment.spec!.selector.matchLabels);
      const minReplicas = deployment.spec!.replicas ?? (hpa.spec!.scaleTargetRef.name === name ? hpa.spec!.minReplicas! : 1);
      // A budget as large as the replica count would block every node drain.
      expect(Number(budget.spec!.minAvailable)).toBeLessThan(minReplicas);
    }
  });
});

describe("secrets", () => {
  const templates = ofKind<ISecret>(docs, "Secret");
  const referenced = [...deployments, ...jobs].flatMap((w) =>
    (onlyContainer(w).env ?? []).flatMap((e) => (e.valueFrom?.secretKeyRef ? [`${e.valueFrom.secretKeyRef.name}/${e.valueFrom.secretKeyRef.key}`] : [])),
  );

  it("have a template for every Secret a workload reads, and none unused", () => {
    const templated = templates.flatMap((s) => Object.keys(s.stringData ?? {}).map((key) => `${s.metadata!.name}/${key}`));
    expect([...new Set(referenced)].sort()).toEqual(templated.sort());
  });

  it("are never committed with a value", () => {
    for (const secret of templates) {
      expect(secret.data, secret.metadata!.name).toBeUndefined();
      for (const value of Object.values(secret.stringData ?? {})) expect(value, secret.metadata!.name).toMatch(/<[^>]+>/);
    }
    expect(docs.filter(inKustomization).some((d) => d.doc.kind === "Secret")).toBe(false);
  });

  it("reach each pod only as far as it needs them", () => {
    const secretsOf = (name: string) =>
      (onlyContainer(byName(deployments, name)).env ?? []).flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef.name] : [])).sort();
    // The gateway counts its rate limits in Redis and signs review UI sessions, both shared by every replica.
    expect(secretsOf("gateway")).toEqual(["redis-url", "service-signing-key", "ui-session-secret"]);
    expect(secretsOf("memory")).toEqual(["memory-database-url", "redis-url", "service-trusted-keys"]);
    // Search can neither mint credentials nor write: no signing key, the read-only URL only.
    expect(secretsOf("search")).toEqual(["search-database-url", "service-trusted-keys"]);
    expect(secretsOf("consolidator")).toEqual(["redis-url", "service-signing-key"]);
  });
});
