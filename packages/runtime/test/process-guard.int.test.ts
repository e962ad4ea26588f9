/**
 * The process-wide failure policy, checked in a child process of its own (the test runner's
 * process must keep its handlers): a lost side task and a known transient connection failure are
 * logged and survived; anything else uncaught ends the process with exit code 1.
 */
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../../test/support/processes.js";

function runGuarded(body: string): Promise<{ code: number | null; lines: Array<{ level: number; msg: string }> }> {
  const script = `
    import { createLogger, guardProcess } from "./packages/runtime/dist/index.js";
    const log = createLogger({ service: "guard-test" });
    guardProcess(log, { recoverable: (err) => err instanceof Error && err.code === "ECONNRESET" });
    ${body}
  `;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.on("exit", (code) =>
      resolve({
        code,
        lines: out
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { level: number; msg: string }),
      }),
    );
  });
}

describe("guardProcess", () => {
  it("keeps running after an unhandled rejection and a recoverable uncaught error", async () => {
    const { code, lines } = await runGuarded(`
      Promise.reject(new Error("side task failed"));
      setTimeout(() => { throw Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }); }, 10);
      setTimeout(() => { log.info("still here"); process.exit(0); }, 100);
    `);
    expect(code).toBe(0);
    expect(lines.map((l) => l.msg)).toEqual([
      "unhandled promise rejection (kept running)",
      "connection failure escaped its owner (kept running)",
      "still here",
    ]);
  });

  it("exits with 1 on any other uncaught exception", async () => {
    const { code, lines } = await runGuarded(`
      setTimeout(() => { throw new TypeError("a bug"); }, 10);
      setTimeout(() => { log.info("should not get here"); process.exit(0); }, 500);
    `);
    expect(code).toBe(1);
    expect(lines.map((l) => l.msg)).toEqual(["uncaught exception; exiting"]);
    expect(lines[0]!.level).toBe(60);
  });
});
