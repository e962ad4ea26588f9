import { describe, expect, it } from "vitest";
import { sameToken } from "../src/http/cookies.js";

describe("sameToken", () => {
  it("matches equal tokens only, and never a missing or empty one", () => {
    expect(sameToken("abc123", "abc123")).toBe(true);
    expect(sameToken("abc123", "abc124")).toBe(false);
    expect(sameToken("abc123", "abc12")).toBe(false);
    expect(sameToken(undefined, "abc")).toBe(false);
    expect(sameToken("abc", undefined)).toBe(false);
    expect(sameToken("", "")).toBe(false);
  });

  it("refuses a token as long in characters but not in bytes, instead of throwing", () => {
    // "é" is one UTF-16 unit and two UTF-8 bytes: a forged form field must be a plain mismatch (403), not a 500.
    expect(sameToken("abcdé", "abcde")).toBe(false);
    expect(sameToken("abcde", "abcdé")).toBe(false);
  });
});
