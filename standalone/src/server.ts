import { parseArgs } from "node:util";
import { isTransientDatabaseError } from "@3ngram/db";
import { createLogger, errorSummary, guardProcess, onShutdown, startTracing } from "@3ngram/runtime";
import { startStandalone } from "./standalone.js";

const env = process.env;
// One provider for the whole process: the four services' spans tell themselves apart by their names and rpc.service.
const tracing = startTracing({ serviceName: "3ngram", env });
const logLevel = env.LOG_LEVEL ?? "warn";
const log = createLogger({ service: "standalone", level: logLevel });
guardProcess(log, { recoverable: isTransientDatabaseError });
/** `--db-port <n>` (or STANDALONE_DB_PORT): a loopback port for database tools; none by default. */
function dbPortOption(): number | undefined {
  const { values } = parseArgs({ args: process.argv.slice(2), options: { "db-port": { type: "string" } }, strict: true });
  const given = values["db-port"] ?? env.STANDALONE_DB_PORT;
  if (given === undefined || given === "") return undefined;
  const port = Number(given);
  if (!/^[0-9]{1,5}$/.test(given) || port > 65_535) throw new Error(`--db-port must be a port number (0 picks a free one), got ${JSON.stringify(given)}`);
  return port;
}

try {
  const running = await startStandalone({
    dataDir: env.THREENGRAM_DATA_DIR ?? "./data",
    port: Number(env.PORT ?? 8080),
    host: env.HOST ?? "127.0.0.1",
    dbPort: dbPortOption(),
    logLevel,
    env,
  });
  const key = running.identity.apiKey;
  // The one place a key is printed: the owner's own terminal, on the owner's own machine.
  process.stdout.write(
    [
      "",
      "3ngram is running (standalone mode).",
      "",
      `  MCP endpoint:  ${running.mcpUrl}`,
      `  REST API:      ${running.url}/api/v1`,
      `  Web UI:        ${running.uiUrl}  (sign in with the key below to browse, search and review)`,
      `  API key:       ${key}`,
      `  Tenant:        ${running.identity.tenantId}`,
      `  Database:      ${running.databaseUrl}  (Unix socket, only for your user, while running; npm run admin -w services/memory finds it)`,
      ...(running.dbTools ? [`  Database port: ${running.dbTools.url}  (for tools; password in ${running.dbTools.passwordFile})`] : []),
      "",
      "Connect Claude Code:",
      `  claude mcp add --transport http 3ngram ${running.mcpUrl} --header "Authorization: Bearer ${key}"`,
      "",
      "Or any MCP client (JSON config):",
      `  {"mcpServers": {"3ngram": {"type": "http", "url": "${running.mcpUrl}", "headers": {"Authorization": "Bearer ${key}"}}}}`,
      "",
      `Data lives in ${running.dataDir}. Stop with Ctrl-C.`,
      "",
    ].join("\n"),
  );
  onShutdown(log, [() => running.close(), () => tracing.shutdown()]);
} catch (err) {
  log.fatal({ error: errorSummary(err) }, "standalone server failed to start");
  process.exit(1);
}
