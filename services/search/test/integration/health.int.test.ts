import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkHealth } from "@3ngram/rpc";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { waitFor } from "../../../../test/support/processes.js";

let stack: CoreServices;

beforeAll(async () => {
  stack = await startCoreServices({ label: "health" });
});
afterAll(async () => {
  await stack?.close();
});

describe("gRPC health follows the database", () => {
  it("turns NOT_SERVING on memory and search when their database goes away", async () => {
    expect(await checkHealth(stack.memoryAddress)).toBe("SERVING");
    expect(await checkHealth(stack.searchAddress, "search.v1.SearchService")).toBe("SERVING");
    await stack.db.drop();
    await waitFor("memory NOT_SERVING", async () => (await checkHealth(stack.memoryAddress)) === "NOT_SERVING", 15_000);
    await waitFor("search NOT_SERVING", async () => (await checkHealth(stack.searchAddress)) === "NOT_SERVING", 15_000);
  });
});
