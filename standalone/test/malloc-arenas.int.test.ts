/**
 * glibc's malloc arena cap reaches the standalone server however it is started (docs/adr/0036):
 * `make run` puts it in the environment, and a direct `node standalone/dist/main.js` on a Node.js
 * with process.execve replaces itself with a process that has it. What is checked is the server
 * process's own initial environment, read from /proc, not anything the code reports about itself.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { STANDALONE_MALLOC_ARENA_MAX, STANDALONE_MALLOC_MMAP_THRESHOLD } from "../src/index.js";
import { shouldReexecForArenaCap, type ArenaCapCheck } from "../src/malloc-arenas.js";
import { eventually, REPO_ROOT } from "../../test/support/processes.js";

// One data directory for every start (they run one after another): only the first pays for creating the cluster.
const dataDir = mkdtempSync(join(tmpdir(), "3ngram-arenas-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** What the server needs to start quickly (no model to load). */
function serverEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? tmpdir(),
    THREENGRAM_DATA_DIR: dataDir,
    PORT: "0",
    EMBEDDINGS_PROVIDER: "hashing",
    ...extra,
  };
}

interface Started {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function start(command: string, args: string[], env: Record<string, string>): Started {
  // Its own process group, so the test can send a signal to everything it started, as Ctrl-C does.
  const child = spawn(command, args, { cwd: REPO_ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return { child, output: () => output, exited };
}

async function waitForBanner(started: Started): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!/API key:\s+\S+/.test(started.output())) {
    if (started.child.exitCode !== null || started.child.signalCode !== null) throw new Error(`exited before its banner:\n${started.output()}`);
    if (Date.now() > deadline) throw new Error(`no banner within 60 s:\n${started.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The process (pid or a descendant) whose arguments include standalone/dist/main.js (a shell running the recipe has it inside one -c argument). */
function serverPid(pid: number): number | null {
  let argv: string[];
  let children: string[];
  try {
    argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean);
  } catch {
    return null;
  }
  if (argv.includes("standalone/dist/main.js")) return pid;
  for (const child of children) {
    const found = serverPid(Number(child));
    if (found !== null) return found;
  }
  return null;
}

/** The environment a process started with (after its last exec). */
function initialEnv(pid: number): Map<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean);
  return new Map(entries.map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]));
}

/** A Node.js that can exec in place: this one, or the Node 24 the conformance suite installs (`make conformance-install`). */
function nodeWithExecve(): string {
  if (typeof (process as { execve?: unknown }).execve === "function") return process.execPath;
  const node24 = join(REPO_ROOT, "test/conformance/node_modules/.bin/node");
  if (!existsSync(node24)) throw new Error(`this Node.js (${process.version}) has no process.execve and ${node24} is missing: run make conformance-install`);
  return node24;
}

describe("when standalone re-executes itself with the arena cap", () => {
  const base: ArenaCapCheck = { platform: "linux", env: {}, execve: () => undefined as never, isGlibc: () => true };

  it("does so on glibc Linux when nobody chose a cap and Node.js can exec in place", () => {
    expect(shouldReexecForArenaCap(base)).toBe(true);
  });

  it("leaves every other case alone, so the new image never asks again", () => {
    expect(shouldReexecForArenaCap({ ...base, env: { MALLOC_ARENA_MAX: STANDALONE_MALLOC_ARENA_MAX } })).toBe(false);
    expect(shouldReexecForArenaCap({ ...base, env: { MALLOC_ARENA_MAX: "8" } })).toBe(false);
    expect(shouldReexecForArenaCap({ ...base, env: { MALLOC_ARENA_MAX: "" } })).toBe(false);
    expect(shouldReexecForArenaCap({ ...base, env: { GLIBC_TUNABLES: "glibc.malloc.arena_max=4" } })).toBe(false);
    expect(shouldReexecForArenaCap({ ...base, platform: "darwin" })).toBe(false);
    expect(shouldReexecForArenaCap({ ...base, isGlibc: () => false })).toBe(false);
    expect(shouldReexecForArenaCap({ ...base, execve: undefined })).toBe(false);
  });
});

describe("the standalone server's malloc arena cap", () => {
  it("is in the environment of the server that make run starts, on this Node.js, unless the caller set one", async () => {
    await expect(makeRunServerEnv({})).resolves.toBe(STANDALONE_MALLOC_ARENA_MAX);
    await expect(makeRunServerEnv({ MALLOC_ARENA_MAX: "4" })).resolves.toBe("4");
  }, 240_000);

  async function makeRunServerEnv(callerEnv: Record<string, string>): Promise<string | undefined> {
    // -o: the build and install the run target depends on are taken as done (the test runs on a built tree).
    const make = start("make", ["-s", "-o", "build", "-o", "node_modules/.install-stamp", "run", `NODE=${process.execPath}`], serverEnv(callerEnv));
    try {
      await waitForBanner(make);
      const pid = serverPid(make.child.pid!);
      if (pid === null) throw new Error(`no standalone server under make:\n${make.output()}`);
      const value = initialEnv(pid).get("MALLOC_ARENA_MAX");
      // Ctrl-C reaches the whole foreground group; the server shuts down and nothing is left.
      process.kill(-make.child.pid!, "SIGINT");
      await make.exited;
      await eventually(() => expect(existsSync(`/proc/${pid}`)).toBe(false));
      return value;
    } finally {
      if (make.child.exitCode === null && make.child.signalCode === null) process.kill(-make.child.pid!, "SIGKILL");
    }
  }

  it("is set by a direct start on a Node.js with process.execve, in the same process, which still exits 0 on SIGTERM", async () => {
    const server = start(nodeWithExecve(), ["standalone/dist/main.js"], serverEnv());
    try {
      await waitForBanner(server);
      // Read from the pid the caller started: the cap is in that process, not in a child of it, so
      // the server's signals and exit code are the ones the caller sees.
      expect(initialEnv(server.child.pid!).get("MALLOC_ARENA_MAX")).toBe(STANDALONE_MALLOC_ARENA_MAX);
      // The mmap threshold comes with it (docs/adr/0043).
      expect(initialEnv(server.child.pid!).get("MALLOC_MMAP_THRESHOLD_")).toBe(STANDALONE_MALLOC_MMAP_THRESHOLD);
      server.child.kill("SIGTERM");
      expect(await server.exited).toEqual({ code: 0, signal: null });
    } finally {
      if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill("SIGKILL");
    }
  }, 120_000);
});
