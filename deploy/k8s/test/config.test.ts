/**
 * The environment each rendered workload receives (ConfigMap + Secret references, with generated
 * stand-in secret values) goes through that service's own config loader. A renamed variable, a
 * bad value, or a port that disagrees with the probes fails here, not in a crash-looping pod.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { IContainer } from "kubernetes-models/v1/Container";
import { consolidatorConfigSchema } from "@3ngram/consolidator";
import { embeddingsConfigSchema } from "@3ngram/embeddings";
import { gatewayConfigSchema } from "@3ngram/gateway";
import { loadMemoryConfig, memoryConfigSchema } from "@3ngram/memory";
import { loadConfig, type Env } from "@3ngram/runtime";
import { loadSearchConfig, searchConfigSchema } from "@3ngram/search";
import { createTestKeys, type TestKeys } from "../../../test/support/keys.js";
import { byName, containerPort, loadRendered, ofKind, onlyContainer, type ConfigMapDoc, type DeploymentDoc, type JobDoc } from "./rendered.js";

const docs = loadRendered();
const deployments = ofKind<DeploymentDoc>(docs, "Deployment");
const configMaps = ofKind<ConfigMapDoc>(docs, "ConfigMap");
const jobs = ofKind<JobDoc>(docs, "Job");

const DATABASE_URLS = {
  "memory-database-url": "postgres://threengram_memory:stand-in@db.example:5432/threengram",
  "search-database-url": "postgres://threengram_reader:stand-in@replica.example:5432/threengram",
  "migration-database-url": "postgres://postgres:stand-in@db.example:5432/threengram",
};
const REDIS_URL = "rediss://:stand-in@redis.example:6379";

let keys: TestKeys;
/** Stand-in values for each Secret, keyed "name/key", shaped like the real ones (real key pair). */
let secretValues: Record<string, string>;

beforeAll(async () => {
  keys = await createTestKeys();
  secretValues = {
    "service-signing-key/SERVICE_SIGNING_JWK": keys.signingJwk,
    "service-trusted-keys/SERVICE_TRUSTED_JWKS": keys.trustedJwks,
    ...Object.fromEntries(Object.entries(DATABASE_URLS).map(([name, url]) => [`${name}/DATABASE_URL`, url])),
    "redis-url/REDIS_URL": REDIS_URL,
    "ui-session-secret/UI_SESSION_SECRET": "stand-in-ui-session-secret-of-48-characters-000",
  };
});

/** What the container's process.env would hold, resolved the way the kubelet does. */
function environment(container: IContainer): Env {
  const env: Env = {};
  for (const source of container.envFrom ?? []) {
    const name = source.configMapRef?.name;
    if (!name) throw new Error(`${container.name}: only ConfigMap envFrom is expected`);
    Object.assign(env, byName(configMaps, name).data);
  }
  for (const entry of container.env ?? []) {
    if (entry.value !== undefined) env[entry.name] = entry.value;
    else if (entry.valueFrom?.secretKeyRef) {
      const ref = `${entry.valueFrom.secretKeyRef.name}/${entry.valueFrom.secretKeyRef.key}`;
      const value = secretValues[ref];
      if (value === undefined) throw new Error(`${container.name}: no stand-in for Secret ${ref}`);
      env[entry.name] = value;
    } else throw new Error(`${container.name}: ${entry.name} has neither a value nor a Secret reference`);
  }
  return env;
}

/** The variable names a zod env schema reads (through transforms, down to its object). */
function schemaKeys(schema: unknown): string[] {
  let current = schema as { def: { type: string; in?: unknown; shape?: Record<string, unknown> } };
  while (current.def.type === "pipe") current = current.def.in as typeof current;
  if (current.def.type !== "object" || !current.def.shape) throw new Error(`not an object schema: ${current.def.type}`);
  return Object.keys(current.def.shape);
}

const embeddingKeys = schemaKeys(embeddingsConfigSchema);
const KNOWN_KEYS = {
  gateway: schemaKeys(gatewayConfigSchema),
  memory: [...schemaKeys(memoryConfigSchema), ...embeddingKeys],
  search: [...schemaKeys(searchConfigSchema), ...embeddingKeys],
  consolidator: [...schemaKeys(consolidatorConfigSchema), ...embeddingKeys],
};

const envOf = (name: string) => environment(onlyContainer(byName(deployments, name)));
const portOf = (name: string, port: string) => containerPort(onlyContainer(byName(deployments, name)), port);

describe("workload environment", () => {
  it("sets only variables each service reads (a misspelt name would be ignored silently)", () => {
    for (const [service, known] of Object.entries(KNOWN_KEYS)) {
      const unknown = Object.keys(envOf(service)).filter((key) => !known.includes(key));
      expect(unknown, service).toEqual([]);
    }
  });

  it("parses with the gateway's config schema, listening on the port its probes and Service use", () => {
    const config = loadConfig(gatewayConfigSchema, envOf("gateway"));
    expect(config.port).toBe(portOf("gateway", "http"));
    expect(config.host).toBe("0.0.0.0");
    expect(config.serviceSigningJwk).toEqual(keys.pair.privateJwk);
    expect(config.memoryAddr).toMatch(/^dns:\/\/\/memory[.:]/);
    expect(config.searchAddr).toMatch(/^dns:\/\/\/search[.:]/);
  });

  it("parses with the memory service's loader: runtime database URL, no migrations, ports as declared", () => {
    const config = loadMemoryConfig(envOf("memory"));
    expect(config.databaseUrl).toBe(DATABASE_URLS["memory-database-url"]);
    expect(config.migrateOnStart).toBe(false);
    expect(config.grpcPort).toBe(portOf("memory", "grpc"));
    expect(config.metricsPort).toBe(portOf("memory", "metrics"));
    expect(config.serviceTrustedJwks).toEqual([keys.pair.publicJwk]);
    expect(config.redisUrl).toBe(REDIS_URL);
  });

  it("parses with the search service's loader: the read-only database URL, ports as declared", () => {
    const config = loadSearchConfig(envOf("search"));
    expect(config.databaseUrl).toBe(DATABASE_URLS["search-database-url"]);
    expect(config.grpcPort).toBe(portOf("search", "grpc"));
    expect(config.metricsPort).toBe(portOf("search", "metrics"));
    expect(config.serviceTrustedJwks).toEqual([keys.pair.publicJwk]);
  });

  it("parses with the consolidator's schema, serving /metrics and /healthz where its probes look", () => {
    const config = loadConfig(consolidatorConfigSchema, envOf("consolidator"));
    expect(config.metricsPort).toBe(portOf("consolidator", "metrics"));
    expect(config.metricsPort).toBeGreaterThan(0);
    expect(config.signingJwk).toEqual(keys.pair.privateJwk);
    expect(config.redisUrl).toBe(REDIS_URL);
  });

  it("agrees across services on the queue prefix, the embeddings model and the peers", () => {
    const memory = loadMemoryConfig(envOf("memory"));
    const search = loadSearchConfig(envOf("search"));
    const consolidator = loadConfig(consolidatorConfigSchema, envOf("consolidator"));
    const gateway = loadConfig(gatewayConfigSchema, envOf("gateway"));
    // Memory enqueues and the consolidator consumes under the same prefix.
    expect(consolidator.redisKeyPrefix).toBe(memory.redisKeyPrefix);
    // Vectors written by memory are compared with query vectors from search.
    expect(search.embeddings).toEqual(memory.embeddings);
    expect(consolidator.embeddings).toEqual(memory.embeddings);
    expect([consolidator.memoryAddr, consolidator.searchAddr]).toEqual([gateway.memoryAddr, gateway.searchAddr]);
    expect(gateway.memoryAddr.endsWith(`:${memory.grpcPort}`)).toBe(true);
    expect(gateway.searchAddr.endsWith(`:${search.grpcPort}`)).toBe(true);
  });

  it("gives the migration Job exactly the migrator's DATABASE_URL, a URL the memory service accepts", () => {
    const env = environment(onlyContainer(jobs[0]!));
    expect(Object.keys(env)).toEqual(["DATABASE_URL"]);
    expect(env.DATABASE_URL).toBe(DATABASE_URLS["migration-database-url"]);
    expect(memoryConfigSchema.in.shape.DATABASE_URL.safeParse(env.DATABASE_URL).success).toBe(true);
  });
});
