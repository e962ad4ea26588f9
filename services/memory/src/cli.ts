/**
 * Operator commands for the memory service's database:
 *   migrate                          apply pending migrations (the Kubernetes migration Job runs this)
 *   create-tenant <name> [key-name]  create a tenant, its first user and an API key (printed once)
 *   create-key <tenant-id> <name> [--read-only] [--user <user-id>]
 *                                    another API key for the tenant's first (or named) user (printed once)
 *   list-keys <tenant-id>            the tenant's keys: id, prefix, name, scopes, created, last used, revoked
 *   revoke-key <tenant-id> <key-id | prefix>
 *                                    revoke one key (gateways stop accepting it within 30 s)
 *   rotate-signing-key               retire the OAuth access-token signing key; the next token
 *                                    request creates its successor, the old key verifies for 24 h
 * Reads DATABASE_URL from the environment.
 */
import { createPool, withOwnerTransaction } from "@3ngram/db";
import { migrate } from "./db/migrate.js";
import { retireActiveSigningKey } from "./db/oauth.js";
import { issueApiKey, listApiKeys, revokeApiKey } from "./domain/key-admin.js";
import { API_KEY_SCOPES, createTenantWithKey } from "./domain/tenants.js";

/** The value after `flag` in args, if present. */
function option(args: readonly string[], flag: string): string | undefined {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : undefined;
}

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
    case "create-key": {
      const [tenantId, name] = args;
      if (!tenantId || !name || name.startsWith("--")) throw new Error("usage: create-key <tenant-id> <name> [--read-only] [--user <user-id>]");
      const user = option(args, "--user");
      const scopes = args.includes("--read-only") ? ["memory:read"] : [...API_KEY_SCOPES];
      console.log(JSON.stringify(await issueApiKey(pool, { tenantId, name, scopes, ...(user ? { userId: user } : {}) }), null, 2));
      break;
    }
    case "list-keys": {
      const [tenantId] = args;
      if (!tenantId) throw new Error("usage: list-keys <tenant-id>");
      console.log(JSON.stringify(await listApiKeys(pool, tenantId), null, 2));
      break;
    }
    case "revoke-key": {
      const [tenantId, key] = args;
      if (!tenantId || !key) throw new Error("usage: revoke-key <tenant-id> <key-id | prefix>");
      console.log(`revoked key ${await revokeApiKey(pool, { tenantId, key })}; gateways stop accepting it within 30 s`);
      break;
    }
    case "rotate-signing-key": {
      const retired = await withOwnerTransaction(pool, (db) => retireActiveSigningKey(db));
      console.log(retired > 0 ? "retired the active signing key; gateways pick up its successor within 5 minutes" : "no active signing key");
      break;
    }
    default:
      console.error("usage: cli.js migrate | create-tenant <name> [key-name] | create-key <tenant-id> <name> [--read-only] [--user <user-id>] | list-keys <tenant-id> | revoke-key <tenant-id> <key-id|prefix> | rotate-signing-key");
      process.exitCode = 2;
  }
} catch (err) {
  console.error((err as Error).message);
  process.exitCode = 1;
} finally {
  await pool.end();
}
