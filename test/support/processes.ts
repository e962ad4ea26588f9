import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Ports for the servers a test starts come from a band below Linux's ephemeral range (32768-60999),
 * one slice per vitest worker. A port the OS handed out for listening was in the ephemeral range,
 * so any outgoing connection (to PostgreSQL, Redis, a peer) could take it as its local port before
 * the service bound it, or while a service was down for a restart round, and the service failed
 * with EADDRINUSE. Slices keep two workers from choosing the same port.
 */
const PORT_BAND_START = 20_000;
const PORTS_PER_WORKER = 2_000;
const PORT_SLICES = 6;
let nextPortOffset = 0;

/** A port in this worker's slice that nothing listened on a moment ago, never one given out before in this worker. */
export async function freePort(): Promise<number> {
  const worker = Number(process.env.VITEST_POOL_ID ?? "1");
  const sliceStart = PORT_BAND_START + ((Number.isInteger(worker) && worker > 0 ? worker - 1 : 0) % PORT_SLICES) * PORTS_PER_WORKER;
  for (let tried = 0; tried < PORTS_PER_WORKER; tried++) {
    const port = sliceStart + (nextPortOffset++ % PORTS_PER_WORKER);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port between ${sliceStart} and ${sliceStart + PORTS_PER_WORKER - 1}`);
}

/** Whether a server can listen on every address at `port` (as the services do) right now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "0.0.0.0", () => server.close(() => resolve(true)));
  });
}

export interface ServiceProcess {
  name: string;
  child: ChildProcess;
  /** Everything the process wrote, for failure messages. */
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Resolves with the exit code once the process ends on its own. */
  exited(): Promise<number | null>;
}

/** Starts a built service (`<dir>/dist/main.js`) as its own Node.js process; `nodeArgs` go to node before the script (e.g. --cpu-prof). */
export function startServiceProcess(name: string, script: string, env: Record<string, string>, nodeArgs: readonly string[] = []): ServiceProcess {
  const child = spawn(process.execPath, [...nodeArgs, script], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    name,
    child,
    output: () => output,
    exited: () => exited,
    async stop(signal = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** Polls until check() is true, failing with the process output after the deadline. */
export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 30_000, proc?: ServiceProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    if (proc && proc.child.exitCode !== null) throw new Error(`${proc.name} exited while waiting for ${what}:\n${proc.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}${proc ? `:\n${proc.output()}` : ""}`);
}

/** Retries `check` until it stops throwing, then returns; after `timeoutMs` its last error surfaces. */
export async function eventually(check: () => unknown, timeoutMs = 15_000, intervalMs = 10): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }
}
