/**
 * Operator commands for the memory service's database:
 *   migrate                          apply pending migrations (the Kubernetes migration Job runs this)
 *   create-tenant <name> [key-name]  create a tenant, its first user and an API key (printed once)
 *   rotate-signing-key               retire the OAuth access-token signing key; the next token
 *                                    request creates its successor, the old key verifies for 24 h
 * Reads DATABASE_URL from the environment.
 */
import { createPool, withOwnerTransaction } from "@3ngram/db";
import { migrate } from "./db/migrate.js";
import { retireActiveSigningKey } from "./db/oauth.js";
import { createTenantWithKey } from "./domain/tenants.js";

const [command, ...args] = process.argv.slice(2);
const url = process.env.DATABASE_URL;
if (!url) {
  console.error("DATABASE_URL is required");
  process.exit(2);
}
const pool = createPool({ connectionString: url, max: 2, applicationName: "3ngram-memory-cli" });
try {
  switch (command) {
    case "migrate": {
      const result = await migrate(pool);
      console.log(result.applied.length > 0 ? `applied: ${result.applied.join(", ")}` : "schema is up to date");
      break;
    }
    case "create-tenant": {
      const [tenantName, keyName] = args;
      if (!tenantName) throw new Error("usage: create-tenant <name> [key-name]");
      const created = await createTenantWithKey(pool, { tenantName, ...(keyName ? { keyName } : {}) });
      console.log(JSON.stringify(created, null, 2));
      break;
    }
    case "rotate-signing-key": {
      const retired = await withOwnerTransaction(pool, (db) => retireActiveSigningKey(db));
      console.log(retired > 0 ? "retired the active signing key; gateways pick up its successor within 5 minutes" : "no active signing key");
      break;
    }
    default:
      console.error("usage: cli.js migrate | create-tenant <name> [key-name] | rotate-signing-key");
      process.exitCode = 2;
  }
} catch (err) {
  console.error((err as Error).message);
  process.exitCode = 1;
} finally {
  await pool.end();
}
