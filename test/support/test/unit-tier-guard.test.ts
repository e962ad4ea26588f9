/**
 * The unit tier's guard (test/support/unit-tier-guard.ts, loaded before this file as before every
 * unit test): a socket or a child process fails the test with a message that says where it belongs.
 */
import { execFile, spawnSync } from "node:child_process";
import net from "node:net";
import { describe, expect, it } from "vitest";

describe("the unit tier", () => {
  it("refuses to listen on a socket", () => {
    expect(() => net.createServer().listen(0)).toThrow(/unit test listened on a socket; name the file \*\.int\.test\.ts/);
  });

  it("refuses to connect a socket", () => {
    expect(() => net.connect(5432, "127.0.0.1")).toThrow(/unit test opened a socket/);
  });

  it("refuses to start a child process, through named imports too", () => {
    expect(() => spawnSync("true")).toThrow(/started a child process \(spawnSync\)/);
    expect(() => execFile("true")).toThrow(/started a child process \(execFile\)/);
  });
});
