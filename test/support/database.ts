import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import pg from "pg";
import { assertLocalDatabaseUrl } from "@3ngram/db";

/** The maintenance connection used to create and drop per-test databases. */
const ADMIN_DATABASE_URL = process.env.TEST_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** A fresh, empty database for one test file; dropped (with its connections) afterwards. */
export async function createTestDatabase(label: string): Promise<TestDatabase> {
  assertLocalDatabaseUrl(ADMIN_DATABASE_URL);
  const name = `t3ngram_${label
    .replace(/[^a-z0-9]/gi, "")
    .toLowerCase()
    .slice(0, 20)}_${process.pid}_${randomBytes(3).toString("hex")}`;
  const admin = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(ADMIN_DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** A Redis key prefix no other test run shares. */
export function uniqueKeyPrefix(label: string): string {
  return `test-${label}-${process.pid}-${randomBytes(3).toString("hex")}`;
}

/** Removes every Redis key a test run created under its prefix. */
export async function deleteKeyPrefix(prefix: string): Promise<void> {
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 500);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
}
