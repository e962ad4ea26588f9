import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** A port that was free a moment ago (the OS hands out a fresh ephemeral port each time). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
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
