import { describe, expect, it } from "vitest";
import { isOriginAllowed, normalizeOrigin, selfOrigins } from "../src/http/origin.js";

describe("origin check", () => {
  const allowed = ["https://app.example.com", "http://localhost:3000"];

  it("allows a request without Origin (native MCP clients send none)", () => {
    expect(isOriginAllowed(undefined, allowed)).toBe(true);
    expect(isOriginAllowed(undefined, [])).toBe(true);
  });

  it("allows listed origins, compared in canonical form", () => {
    expect(isOriginAllowed("https://app.example.com", allowed)).toBe(true);
    expect(isOriginAllowed("HTTPS://APP.EXAMPLE.COM:443", allowed)).toBe(true);
    expect(isOriginAllowed("http://localhost:3000", allowed)).toBe(true);
  });

  it("refuses anything else", () => {
    for (const origin of [
      "https://evil.example.com",
      "http://app.example.com", // scheme differs
      "https://app.example.com:8443", // port differs
      "http://localhost:3001",
      "https://app.example.com.evil.net",
      "null",
      "",
      "not a url",
    ]) {
      expect(isOriginAllowed(origin, allowed), origin).toBe(false);
    }
  });

  it("normalises configured origins and rejects non-web schemes", () => {
    expect(normalizeOrigin("https://Claude.AI/some/path")).toBe("https://claude.ai");
    expect(normalizeOrigin("http://localhost:80")).toBe("http://localhost");
    expect(normalizeOrigin("ftp://files.example.com")).toBeUndefined();
    expect(normalizeOrigin("claude.ai")).toBeUndefined();
  });

  it("counts the server's own origins as allowed: each URL, and every loopback name for a loopback one", () => {
    expect(selfOrigins(["http://127.0.0.1:8080", undefined])).toEqual(["http://127.0.0.1:8080", "http://localhost:8080", "http://[::1]:8080"]);
    expect(selfOrigins(["http://127.0.0.1:8080", "https://memory.example.com/base/"])).toEqual([
      "http://127.0.0.1:8080",
      "http://localhost:8080",
      "http://[::1]:8080",
      "https://memory.example.com",
    ]);
    // A non-loopback listener is only itself; nothing is derived from a name that is not a URL.
    expect(selfOrigins(["http://10.0.0.7:8080", "not a url"])).toEqual(["http://10.0.0.7:8080"]);
    const own = selfOrigins(["http://localhost:3000"]);
    expect(isOriginAllowed("http://127.0.0.1:3000", own)).toBe(true);
    for (const other of ["http://127.0.0.1:3001", "https://localhost:3000", "http://evil.example.com"]) expect(isOriginAllowed(other, own), other).toBe(false);
  });
});
