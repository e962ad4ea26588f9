import { isTransientDatabaseError } from "@3ngram/db";
import { createLogger, errorSummary, guardProcess, onShutdown } from "@3ngram/runtime";
import { startStandalone } from "./standalone.js";

const env = process.env;
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
      `  Review UI:     ${running.uiUrl}  (sign in with the API key to accept or reject proposals)`,
      `  API key:       ${key}`,
      "",
      "Connect Claude Code:",
      `  claude mcp add --transport http 3ngram ${running.mcpUrl} --header "Authorization: Bearer ${key}"`,
      "",
      "Or any MCP client (JSON config):",
      `  {"mcpServers": {"3ngram": {"type": "http", "url": "${running.mcpUrl}", "headers": {"Authorization": "Bearer ${key}"}}}}`,
      "",
      "Data lives in ./data. Stop with Ctrl-C.",
      "",
    ].join("\n"),
  );
  onShutdown(log, [() => running.close()]);
} catch (err) {
  log.fatal({ error: errorSummary(err) }, "standalone server failed to start");
  process.exit(1);
}
