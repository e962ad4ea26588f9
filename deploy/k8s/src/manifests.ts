/**
 * Every rendered file and the objects in it. Paths are relative to deploy/k8s/. The files under
 * manifests/ form the kustomization (`kubectl apply -k deploy/k8s/manifests`); the migration Job
 * and the Secret templates stay outside it on purpose.
 */
import { consolidatorObjects } from "./consolidator.js";
import { gatewayObjects } from "./gateway.js";
import type { KubeObject } from "./kube-object.js";
import { memoryObjects } from "./memory.js";
import { migrateJobObjects } from "./migrate-job.js";
import { namespaceObjects } from "./namespace.js";
import { searchObjects } from "./search.js";
import { secretTemplates } from "./secrets.js";
import { IMAGE, IMAGE_TAG } from "./settings.js";

export interface ManifestFile {
  path: string;
  objects: KubeObject[];
}

export const KUSTOMIZE_DIR = "manifests";

export function manifestFiles(): ManifestFile[] {
  return [
    { path: `${KUSTOMIZE_DIR}/namespace.yaml`, objects: namespaceObjects() },
    { path: `${KUSTOMIZE_DIR}/gateway.yaml`, objects: gatewayObjects() },
    { path: `${KUSTOMIZE_DIR}/memory.yaml`, objects: memoryObjects() },
    { path: `${KUSTOMIZE_DIR}/search.yaml`, objects: searchObjects() },
    { path: `${KUSTOMIZE_DIR}/consolidator.yaml`, objects: consolidatorObjects() },
    { path: "jobs/migrate.yaml", objects: migrateJobObjects() },
    { path: "secrets.template.yaml", objects: secretTemplates() },
  ];
}

/** Every object that `kubectl apply -k` creates. */
export function kustomizedObjects(): KubeObject[] {
  return manifestFiles()
    .filter((file) => file.path.startsWith(`${KUSTOMIZE_DIR}/`))
    .flatMap((file) => file.objects);
}

/** Every object in every rendered file (kustomization, Job and templates). */
export function allObjects(): KubeObject[] {
  return manifestFiles().flatMap((file) => file.objects);
}

/** kustomization.yaml: the resource list, plus the image so an overlay can set registry and tag. */
export function kustomization(): Record<string, unknown> {
  return {
    apiVersion: "kustomize.config.k8s.io/v1beta1",
    kind: "Kustomization",
    resources: manifestFiles()
      .filter((file) => file.path.startsWith(`${KUSTOMIZE_DIR}/`))
      .map((file) => file.path.slice(KUSTOMIZE_DIR.length + 1)),
    images: [{ name: IMAGE, newTag: IMAGE_TAG }],
  };
}
