import { describe, expect, it } from "vitest";
import { composeService } from "../src/resources.js";

describe("composeService", () => {
  it("closes resources in the reverse order they were opened, once", async () => {
    const closed: string[] = [];
    const service = await composeService(async (defer) => {
      for (const name of ["pool", "queue", "relay", "server"]) defer(() => void closed.push(name));
      return { port: 7 };
    });
    expect(service.port).toBe(7);
    await service.close();
    await service.close();
    expect(closed).toEqual(["server", "relay", "queue", "pool"]);
  });

  it("lets a second close() made while the first runs wait for the same close, without releasing anything twice", async () => {
    const closed: string[] = [];
    let finishDraining!: () => void;
    const draining = new Promise<void>((resolve) => (finishDraining = resolve));
    const service = await composeService(async (defer) => {
      defer(() => void closed.push("pool"));
      defer(async () => {
        await draining;
        closed.push("server");
      });
      return {};
    });
    const first = service.close();
    const second = service.close();
    // The pool must stay open while the server still drains, whoever asked to close.
    await Promise.resolve();
    expect(closed).toEqual([]);
    finishDraining();
    await Promise.all([first, second]);
    expect(closed).toEqual(["server", "pool"]);
  });

  it("releases what was opened when building fails, and reports the build's error", async () => {
    const closed: string[] = [];
    const failing = composeService(async (defer) => {
      defer(() => void closed.push("pool"));
      defer(() => {
        throw new Error("release failed too");
      });
      throw new Error("migration failed");
    });
    await expect(failing).rejects.toThrow("migration failed");
    expect(closed).toEqual(["pool"]);
  });

  it("runs every release when one fails, then throws the first failure", async () => {
    const closed: string[] = [];
    const service = await composeService(async (defer) => {
      defer(() => void closed.push("pool"));
      defer(async () => {
        throw new Error("queue would not close");
      });
      defer(() => void closed.push("server"));
      return {};
    });
    await expect(service.close()).rejects.toThrow("queue would not close");
    expect(closed).toEqual(["server", "pool"]);
  });
});
