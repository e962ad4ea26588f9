/**
 * The migration Job: `node services/memory/dist/cli.js migrate` as the schema owner. It runs
 * before the memory Deployment rolls out (memory pods keep MIGRATE_ON_START=false and refuse to
 * start until the roles the migrations create exist). Jobs are immutable once created, so it is
 * kept out of the kustomization and replaced on each release (see deploy/k8s/README.md).
 */
import { Job } from "kubernetes-models/batch/v1/Job";
import type { KubeObject } from "./kube-object.js";
import { container, podSpec } from "./pod.js";
import { SECRETS, secretEnv } from "./secrets.js";
import { NAMESPACE, labels } from "./settings.js";

export const MIGRATE_JOB_NAME = "migrate";

export function migrateJobObjects(): KubeObject[] {
  const migrate = container({
    name: "migrate",
    script: "services/memory/dist/cli.js",
    args: ["migrate"],
    env: [secretEnv(SECRETS.migrationDatabase)],
    resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { cpu: "500m", memory: "256Mi" } },
  });
  return [
    new Job({
      metadata: { name: MIGRATE_JOB_NAME, namespace: NAMESPACE, labels: labels("memory-migrate", "migration") },
      spec: {
        // Migrations run under an advisory lock and skip what is applied, so a retry is safe.
        backoffLimit: 3,
        activeDeadlineSeconds: 600,
        ttlSecondsAfterFinished: 86_400,
        template: {
          metadata: { labels: labels("memory-migrate", "migration") },
          spec: podSpec([migrate], { restartPolicy: "Never" }),
        },
      },
    }),
  ];
}
