/**
 * The Secrets the workloads read. None is committed with a value: the operator creates them
 * (deploy/k8s/README.md shows the commands) and `secrets.template.yaml` only shows their shape.
 * Each holds one purpose, so a pod mounts only the credentials it needs: search never sees the
 * signing key or a writable database URL.
 */
import type { IEnvVar } from "kubernetes-models/v1/EnvVar";
import { Secret } from "kubernetes-models/v1/Secret";
import { NAMESPACE, PART_OF } from "./settings.js";

export interface SecretSpec {
  name: string;
  /** The Secret key, which is also the environment variable the container reads. */
  key: string;
  /** How to make the value (goes into the template as a placeholder). */
  placeholder: string;
  purpose: string;
}

export const SECRETS = {
  signingKey: {
    name: "service-signing-key",
    key: "SERVICE_SIGNING_JWK",
    placeholder: "<the SERVICE_SIGNING_JWK line of `npm run keys`: a private Ed25519 JWK as JSON>",
    purpose: "gateway and consolidator sign per-call service credentials with it",
  },
  trustedKeys: {
    name: "service-trusted-keys",
    key: "SERVICE_TRUSTED_JWKS",
    placeholder: "<the SERVICE_TRUSTED_JWKS line of `npm run keys`: a JSON array of public JWKs>",
    purpose: "memory and search accept credentials signed by these keys",
  },
  memoryDatabase: {
    name: "memory-database-url",
    key: "DATABASE_URL",
    placeholder: "postgres://threengram_memory:<password>@<host>:5432/threengram",
    purpose: "memory service: a login role that is a member of threengram_app",
  },
  searchDatabase: {
    name: "search-database-url",
    key: "DATABASE_URL",
    placeholder: "postgres://threengram_reader:<password>@<replica-host>:5432/threengram",
    purpose: "search service: a login role that is a member of threengram_search only (a replica is fine)",
  },
  migrationDatabase: {
    name: "migration-database-url",
    key: "DATABASE_URL",
    placeholder: "postgres://postgres:<password>@<host>:5432/threengram",
    purpose: "migration Job: the schema owner; a superuser so migration 0004 can mark ts_match_vq LEAKPROOF (ADR-0010)",
  },
  redis: {
    name: "redis-url",
    key: "REDIS_URL",
    placeholder: "rediss://:<password>@<host>:6379",
    purpose: "memory (enqueue), consolidator (BullMQ worker) and gateway (shared rate limits)",
  },
  uiSession: {
    name: "ui-session-secret",
    key: "UI_SESSION_SECRET",
    placeholder: "<at least 32 random characters, e.g. `openssl rand -base64 48`>",
    purpose: "gateway: signs review web UI session cookies, so every replica accepts the others' sessions",
  },
} as const satisfies Record<string, SecretSpec>;

/** An environment variable taken from a Secret; a missing Secret keeps the pod from starting. */
export function secretEnv(secret: SecretSpec): IEnvVar {
  return { name: secret.key, valueFrom: { secretKeyRef: { name: secret.name, key: secret.key } } };
}

/** Secret objects with placeholder values, to show the shape; never applied as they are. */
export function secretTemplates(): Secret[] {
  return Object.values(SECRETS).map(
    (secret) =>
      new Secret({
        metadata: {
          name: secret.name,
          namespace: NAMESPACE,
          labels: { "app.kubernetes.io/part-of": PART_OF },
          annotations: { "3ngram.dev/purpose": secret.purpose },
        },
        type: "Opaque",
        stringData: { [secret.key]: secret.placeholder },
      }),
  );
}
