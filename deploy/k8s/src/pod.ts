/** Pieces every pod shares: the image, a locked-down security context, a writable /tmp, metadata. */
import { createHash } from "node:crypto";
import type { IContainer } from "kubernetes-models/v1/Container";
import type { IPodSecurityContext } from "kubernetes-models/v1/PodSecurityContext";
import type { IPodSpec } from "kubernetes-models/v1/PodSpec";
import type { IResourceRequirements } from "kubernetes-models/v1/ResourceRequirements";
import type { ISecurityContext } from "kubernetes-models/v1/SecurityContext";
import { IMAGE, IMAGE_TAG, RUN_AS_USER } from "./settings.js";

const IMAGE_REF = `${IMAGE}:${IMAGE_TAG}`;

const podSecurityContext: IPodSecurityContext = {
  runAsNonRoot: true,
  runAsUser: RUN_AS_USER,
  runAsGroup: RUN_AS_USER,
  seccompProfile: { type: "RuntimeDefault" },
};

/** Nothing in the services writes to disk; the model and migrations are read from the image. */
const containerSecurityContext: ISecurityContext = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: { drop: ["ALL"] },
};

const TMP_VOLUME = "tmp";

/** A small scratch /tmp, for any library that expects one on a read-only root. */
function tmpVolume(): NonNullable<IPodSpec["volumes"]>[number] {
  return { name: TMP_VOLUME, emptyDir: { sizeLimit: "64Mi" } };
}

export interface ContainerInput {
  name: string;
  /** The script under /app the container runs with node. */
  script: string;
  args?: string[];
  ports?: IContainer["ports"];
  env?: IContainer["env"];
  configMap?: string;
  resources: IResourceRequirements;
  probes?: Pick<IContainer, "livenessProbe" | "readinessProbe" | "startupProbe">;
  lifecycle?: IContainer["lifecycle"];
}

export function container(input: ContainerInput): IContainer {
  return {
    name: input.name,
    image: IMAGE_REF,
    imagePullPolicy: "IfNotPresent",
    command: ["node", input.script, ...(input.args ?? [])],
    ...(input.ports ? { ports: input.ports } : {}),
    ...(input.configMap ? { envFrom: [{ configMapRef: { name: input.configMap } }] } : {}),
    ...(input.env ? { env: input.env } : {}),
    resources: input.resources,
    ...input.probes,
    ...(input.lifecycle ? { lifecycle: input.lifecycle } : {}),
    securityContext: containerSecurityContext,
    volumeMounts: [{ name: TMP_VOLUME, mountPath: "/tmp" }],
  };
}

/** Pod settings shared by Deployments and the Job: no API token, no service-link variables. */
export function podSpec(containers: IContainer[], extra: Partial<IPodSpec> = {}): IPodSpec {
  return {
    // The services never call the Kubernetes API.
    automountServiceAccountToken: false,
    // Service links would inject variables such as MEMORY_PORT=tcp://… next to the real config.
    enableServiceLinks: false,
    securityContext: podSecurityContext,
    containers,
    volumes: [tmpVolume()],
    ...extra,
  };
}

/** Scrape hints for a Prometheus that honours the common prometheus.io annotations. */
export function scrapeAnnotations(port: number): Record<string, string> {
  return { "prometheus.io/scrape": "true", "prometheus.io/port": String(port), "prometheus.io/path": "/metrics" };
}

/** A changed ConfigMap changes this annotation, so `kubectl apply` rolls the pods that read it. */
export function configChecksum(data: Record<string, string>): Record<string, string> {
  const sorted = Object.fromEntries(Object.entries(data).sort(([a], [b]) => a.localeCompare(b)));
  return { "3ngram.dev/config-sha256": createHash("sha256").update(JSON.stringify(sorted)).digest("hex") };
}
