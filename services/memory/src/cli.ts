/**
 * Operator commands for the memory service's database:
 *   migrate                          apply pending migrations (the Kubernetes migration Job runs this)
 *   create-tenant <name> [key-name]  create a tenant, its first user and an API key (printed once)
 *   create-key <tenant-id> <name> [--read-only | --erase] [--user <user-id>]
 *                                    another API key for the tenant's first (or named) user (printed once);
 *                                    --erase adds memory:erase, which no key holds otherwise
 *   list-keys <tenant-id>            the tenant's keys: id, prefix, name, scopes, created, last used, revoked
 *   revoke-key <tenant-id> <key-id | prefix>
 *                                    revoke one key (gateways stop accepting it within 30 s)
 *   rotate-signing-key               retire the OAuth access-token signing key; the next token
 *                                    request creates its successor, the old key verifies for 24 h
 *   erase <tenant-id> --reason <reason> [--reference <ticket>] [--dry-run]
 *         (--id <memory-id> ... | [--scope <s>] [--project <p>] [--topic <t>] [--subject <s>])
 *                                    erase memories (docs/erasure.md); a selector is repeated in
 *                                    batches until nothing it matches is left
 *   import <tenant-id> <file | folder | tar> [--format <format>] [--project <p>]
 *                                    import a file in any import format, or a basic-memory folder,
 *                                    tar or note (docs/import-export.md); progress on stderr, the
 *                                    report on stdout; exits 1 when a record failed
 * Reads DATABASE_URL (and RUNTIME_DB_ROLE for erase and import) from the environment. Without
 * DATABASE_URL, a running standalone server's database is found from its data directory
 * (THREENGRAM_DATA_DIR, default ./data, relative to where npm was run).
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { createPool, withOwnerTransaction, type Pool } from "@3ngram/db";
import { SCOPES } from "@3ngram/rpc";
import { createLogger } from "@3ngram/runtime";
import { eraseInputSchema, parseInput } from "@3ngram/schema";
import { importCommand } from "./cli-import.js";
import { runtimeDbRoleEnv } from "./config.js";
import { migrate } from "./db/migrate.js";
import { erase } from "./domain/erasure.js";
import { retireActiveSigningKey } from "./db/oauth.js";
import { issueApiKey, listApiKeys, revokeApiKey } from "./domain/key-admin.js";
import { DEFAULT_API_KEY_SCOPES, createTenantWithKey } from "./domain/tenants.js";

/** Every flag any command takes; an unknown flag or a missing value is an error, not ignored. */
const FLAGS = {
  "read-only": { type: "boolean" },
  erase: { type: "boolean" },
  user: { type: "string" },
  reason: { type: "string" },
  reference: { type: "string" },
  "dry-run": { type: "boolean" },
  id: { type: "string", multiple: true },
  scope: { type: "string" },
  project: { type: "string" },
  topic: { type: "string" },
  subject: { type: "string" },
  format: { type: "string" },
} as const;

type Flags = ReturnType<typeof parseArgs<{ options: typeof FLAGS; allowPositionals: true }>>["values"];

const TENANT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The erase command: the same domain call the REST routes make, as the runtime role (so the
 * DATABASE_URL user must be able to SET ROLE to it, like the memory service's), recorded with
 * the actor `operator`. A selector runs batch after batch until it matches nothing more.
 */
async function eraseCommand(pool: Pool, args: readonly string[], flags: Flags): Promise<void> {
  const [tenantId] = args;
  if (!tenantId || !TENANT_ID.test(tenantId)) {
    throw new Error(
      "usage: erase <tenant-id> --reason <reason> [--reference <ticket>] [--dry-run] (--id <memory-id>... | [--scope s] [--project p] [--topic t] [--subject s])",
    );
  }
  const ids = flags.id ?? [];
  const selector = { scope: flags.scope, project: flags.project, topic: flags.topic, subject: flags.subject };
  const input = parseInput(eraseInputSchema, {
    ...(ids.length > 0 ? { ids } : {}),
    ...(Object.values(selector).some((v) => v !== undefined) ? { selector } : {}),
    reason: flags.reason,
    reference: flags.reference,
    dryRun: flags["dry-run"] === true,
  });
  const deps = {
    pool,
    runtimeRole: runtimeDbRoleEnv.parse(process.env.RUNTIME_DB_ROLE),
    log: createLogger({ service: "memory-cli", level: "warn" }),
  };
  const actor = { tenantId, userId: undefined, kind: "operator" as const };
  for (;;) {
    const out = await erase(deps, actor, input);
    console.log(JSON.stringify(out));
    // A batch that erased nothing cannot make progress (the rest was erased meanwhile, or this is a dry run).
    if (input.dryRun || out.remaining === 0 || out.erased.length === 0) break;
  }
}

/**
 * Every flag is long (`--name`), so a word with one leading dash is a value: key prefixes and names
 * may start with "-" (base64url). parseArgs would read those as short options, so they are swapped
 * for placeholders a command line cannot contain (a NUL) while parsing, then put back.
 */
function parseCommandLine(argv: readonly string[]): { positionals: string[]; values: Flags } {
  const dashed = new Map<string, string>();
  const args = argv.map((arg, i) => {
    if (!/^-[^-]/.test(arg)) return arg;
    dashed.set(`\u0000${i}`, arg);
    return `\u0000${i}`;
  });
  const parsed = parseArgs({ args, options: FLAGS, allowPositionals: true, strict: true });
  const restore = (value: string) => dashed.get(value) ?? value;
  const values = Object.fromEntries(
    Object.entries(parsed.values).map(([name, value]) => [
      name,
      typeof value === "string" ? restore(value) : Array.isArray(value) ? value.map(restore) : value,
    ]),
  ) as Flags;
  return { positionals: parsed.positionals.map(restore), values };
}

let parsed: { positionals: string[]; values: Flags };
try {
  parsed = parseCommandLine(process.argv.slice(2));
} catch (err) {
  console.error((err as Error).message);
  process.exit(2);
}
const [command, ...args] = parsed.positionals;
const flags = parsed.values;
/**
 * The Unix socket URL a running standalone server writes into its data directory (standalone's
 * writeDatabaseUrl), or undefined. `npm run -w` runs this in the workspace's folder, so a relative
 * data directory is taken from where npm was started (INIT_CWD), as the server took it.
 */
function standaloneDatabaseUrl(): string | undefined {
  const dataDir = resolve(process.env.INIT_CWD ?? process.cwd(), process.env.THREENGRAM_DATA_DIR ?? "data");
  try {
    return readFileSync(resolve(dataDir, "database.url"), "utf8").trim() || undefined;
  } catch {
    return undefined;
  }
}

const url = process.env.DATABASE_URL || standaloneDatabaseUrl();
if (!url) {
  console.error("DATABASE_URL is required (or THREENGRAM_DATA_DIR naming a running standalone server's data directory)");
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
      if (!tenantId || !name) throw new Error("usage: create-key <tenant-id> <name> [--read-only | --erase] [--user <user-id>]");
      if (flags["read-only"] && flags.erase) throw new Error("create-key: --read-only and --erase exclude each other");
      const user = flags.user;
      const scopes = flags["read-only"] ? [SCOPES.read] : flags.erase ? [...DEFAULT_API_KEY_SCOPES, SCOPES.erase] : [...DEFAULT_API_KEY_SCOPES];
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
    case "erase":
      await eraseCommand(pool, args, flags);
      break;
    case "import": {
      const report = await importCommand(pool, args, flags);
      console.log(JSON.stringify(report, null, 2));
      if (report.failed > 0) process.exitCode = 1;
      break;
    }
    default:
      console.error(
        "usage: cli.js migrate | create-tenant <name> [key-name] | create-key <tenant-id> <name> [--read-only | --erase] [--user <user-id>] | list-keys <tenant-id> | revoke-key <tenant-id> <key-id|prefix> | rotate-signing-key | erase <tenant-id> --reason <reason> … | import <tenant-id> <file|folder|tar> [--format f] [--project p]",
      );
      process.exitCode = 2;
  }
} catch (err) {
  console.error((err as Error).message);
  process.exitCode = 1;
} finally {
  await pool.end();
}
