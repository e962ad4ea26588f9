/**
 * The committed YAML, parsed back into plain objects: the tests check what `kubectl apply`
 * would receive, not the TypeScript that produced it.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import type { IContainer } from "kubernetes-models/v1/Container";
import type { IDeployment } from "kubernetes-models/apps/v1/Deployment";
import type { IConfigMap } from "kubernetes-models/v1/ConfigMap";
import type { IService } from "kubernetes-models/v1/Service";
import type { IJob } from "kubernetes-models/batch/v1/Job";
import type { INetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";

export const K8S_DIR = fileURLToPath(new URL("../", import.meta.url));
export const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));

export interface Doc {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: unknown;
}

export interface RenderedDoc {
  /** Relative to deploy/k8s/. */
  file: string;
  doc: Doc;
}

/** Every committed .yaml under deploy/k8s/ (outside node_modules and dist), in path order. */
export function committedYamlFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === "node_modules" || entry.name === "dist") continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".yaml")) out.push(relative(K8S_DIR, path));
    }
  };
  walk(K8S_DIR);
  return out.sort();
}

export function loadRendered(): RenderedDoc[] {
  const docs: RenderedDoc[] = [];
  for (const file of committedYamlFiles()) {
    if (file.endsWith("kustomization.yaml")) continue;
    for (const parsed of parseAllDocuments(readFileSync(join(K8S_DIR, file), "utf8"))) {
      if (parsed.errors.length > 0) throw new Error(`${file}: ${parsed.errors[0]!.message}`);
      const doc = parsed.toJS() as Doc | null;
      if (doc) docs.push({ file, doc });
    }
  }
  return docs;
}

export const inKustomization = (d: RenderedDoc) => d.file.startsWith("manifests/");

export function ofKind<T>(docs: RenderedDoc[], kind: string): Array<T & Doc> {
  return docs.filter((d) => d.doc.kind === kind).map((d) => d.doc as T & Doc);
}

export function byName<T extends Doc>(docs: T[], name: string): T {
  const found = docs.find((d) => d.metadata.name === name);
  if (!found) throw new Error(`no ${name} among ${docs.map((d) => d.metadata.name).join(", ")}`);
  return found;
}

export type DeploymentDoc = IDeployment & Doc;
export type ConfigMapDoc = IConfigMap & Doc;
export type ServiceDoc = IService & Doc;
export type JobDoc = IJob & Doc;
export type NetworkPolicyDoc = INetworkPolicy & Doc;

export function onlyContainer(workload: DeploymentDoc | JobDoc): IContainer {
  const containers = workload.spec?.template.spec?.containers ?? [];
  if (containers.length !== 1) throw new Error(`${workload.metadata.name} has ${containers.length} containers`);
  return containers[0]!;
}

/** The container port a probe or Service refers to, by name or number. */
export function containerPort(container: IContainer, port: number | string): number | undefined {
  const match = (container.ports ?? []).find((p) => (typeof port === "number" ? p.containerPort === port : p.name === port));
  return match?.containerPort;
}
