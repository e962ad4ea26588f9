import { describe, expect, it } from "vitest";
import { isRetryableUpstreamStatus } from "../src/upstream.js";

describe("isRetryableUpstreamStatus", () => {
  it("retries timeouts, conflicts, throttling and server errors, nothing else", () => {
    const retried = [100, 200, 301, 400, 401, 403, 404, 408, 409, 413, 422, 429, 500, 502, 503, 504].filter(isRetryableUpstreamStatus);
    expect(retried).toEqual([408, 409, 429, 500, 502, 503, 504]);
  });
});
