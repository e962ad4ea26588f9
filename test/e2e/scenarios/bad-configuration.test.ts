/**
 * Every service process reads its configuration the same way (serviceMain, packages/runtime): a
 * bad value ends the process at once with exit code 1 and one message, first word the service,
 * naming the variable — no stack trace, nothing started. Each service is given one valid-looking
 * but wrong setting of its own and one of the shared embeddings settings it reads.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { TEST_REDIS_URL } from "../../support/database.js";
import { createTestKeys } from "../../support/keys.js";
import { startServiceProcess } from "../../support/processes.js";
import { loadGatewayEnv, serviceEnv } from "../../support/service-env.js";

const SERVICES = [
  { name: "memory", script: "services/memory/dist/main.js", bad: { EMBEDDINGS_WORKERS: "two" } },
  { name: "search", script: "services/search/dist/main.js", bad: { EMBEDDINGS_LOCAL_MODEL: "gpt-9" } },
  { name: "gateway", script: "services/gateway/dist/main.js", bad: { RATE_LIMIT_KEY_PER_MINUTE: "lots" } },
  { name: "consolidator", script: "services/consolidator/dist/main.js", bad: { OTEL_TRACES_EXPORTER: "carrier-pigeon" } },
] as const;

/** A complete, valid environment for every service (nothing listens on its addresses: none is reached). */
let validEnv: Record<string, string>;

beforeAll(async () => {
  const keys = await createTestKeys();
  validEnv = {
    ...serviceEnv({ databaseUrl: "postgres://127.0.0.1:1/none", redisUrl: TEST_REDIS_URL, prefix: "badconfig", keys, memoryPort: 1, searchPort: 2 }),
    ...loadGatewayEnv(3, "badconfig"),
  };
});

describe("a service started with a bad setting", () => {
  for (const service of SERVICES) {
    const [variable] = Object.keys(service.bad);
    it(`${service.name}: exits 1 naming ${variable}, without a stack trace`, { timeout: 30_000 }, async () => {
      const proc = startServiceProcess(service.name, service.script, { ...validEnv, ...service.bad });
      expect(await proc.exited()).toBe(1);
      const output = proc.output();
      expect(output).toMatch(new RegExp(`^${service.name}: invalid configuration:\n  ${variable}: `));
      expect(output).not.toMatch(/\n\s+at /);
    });
  }
});
