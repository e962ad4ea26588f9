export { allObjects, kustomization, kustomizedObjects, manifestFiles, KUSTOMIZE_DIR, type ManifestFile } from "./manifests.js";
export { renderAll, toPlain } from "./yaml.js";
export type { KubeObject } from "./kube-object.js";
export { SECRETS, type SecretSpec } from "./secrets.js";
export { SHARED_CONFIG } from "./shared-config.js";
export { GATEWAY_CONFIG } from "./gateway.js";
export { MEMORY_CONFIG } from "./memory.js";
export { SEARCH_CONFIG, SEARCH_SCALING } from "./search.js";
export { CONSOLIDATOR_CONFIG, CONSOLIDATOR_GRACE_SECONDS } from "./consolidator.js";
export { MIGRATE_JOB_NAME } from "./migrate-job.js";
export {
  IMAGE,
  IMAGE_TAG,
  MEMORY_ADDR,
  MONITORING_NAMESPACE,
  NAMESPACE,
  PORTS,
  RUN_AS_USER,
  SEARCH_ADDR,
  SERVICE_NAMES,
  type ServiceName,
} from "./settings.js";
