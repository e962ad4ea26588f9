import { isTransientDatabaseError } from "@3ngram/db";
import { createLogger, errorSummary, guardProcess, onShutdown, startTracing } from "@3ngram/runtime";
import { startStandalone } from "./standalone.js";

const env = process.env;
// One provider for the whole process: the four services' spans tell themselves apart by their names and rpc.service.
const tracing = startTracing({ serviceName: "3ngram", env });
const logLevel = env.LOG_LEVEL ?? "warn";
const log = createLogger({ service: "standalone", level: logLevel });
guardProcess(log, { recoverable: isTransientDatabaseError });
try {
  const running = await startStandalone({
    dataDir: env.THREENGRAM_DATA_DIR ?? "./data",
    port: Number(env.PORT ?? 8080),
    host: env.HOST ?? "127.0.0.1",
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
      `  Database:      ${running.databaseUrl}  (loopback, while running: DATABASE_URL for npm run admin -w services/memory)`,
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
