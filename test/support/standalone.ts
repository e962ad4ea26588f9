/**
 * Starts `make run`'s server (standalone/dist/main.js) as its own process on a data directory and
 * reads what its banner prints: the scenarios and the benchmarks connect with those, as a user does.
 */
import { startServiceProcess, waitFor, type ServiceProcess } from "./processes.js";

export interface StandaloneServer {
  proc: ServiceProcess;
  mcpUrl: string;
  /** The web origin (REST, the web UI). */
  url: string;
  apiKey: string;
  /** The embedded database's URL, for reading what the server stored. */
  databaseUrl: string;
  /** Any other line of the banner, by its label ("Web UI"). */
  field(label: string): string;
}

export async function startStandalone(dataDir: string, env: Record<string, string> = {}, bannerWaitMs = 90_000): Promise<StandaloneServer> {
  const proc = startServiceProcess("standalone", "standalone/dist/main.js", { THREENGRAM_DATA_DIR: dataDir, PORT: "0", LOG_LEVEL: "warn", ...env });
  await waitFor("the standalone banner", async () => /API key:\s+\S+/.test(proc.output()), bannerWaitMs, proc);
  const field = (label: string) => {
    const value = new RegExp(`${label}:\\s+(\\S+)`).exec(proc.output())?.[1];
    if (value === undefined) throw new Error(`the banner has no ${label}:\n${proc.output()}`);
    return value;
  };
  const mcpUrl = field("MCP endpoint");
  return { proc, mcpUrl, url: new URL(mcpUrl).origin, apiKey: field("API key"), databaseUrl: field("Database"), field };
}
