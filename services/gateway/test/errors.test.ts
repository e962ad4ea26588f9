import { AppError, REASONS, REASON_CODES } from "@3ngram/errors";
import { describe, expect, it } from "vitest";
import { toolError, toolErrorText } from "../src/mcp/errors.js";
import { restError } from "../src/rest/errors.js";

const REQUEST_ID = "req-123";

describe("error mapping", () => {
  it.each(REASON_CODES)("%s: REST status comes from the reason table and the MCP text starts with the reason", (reason) => {
    const err = new AppError(reason, "memory 0190c0de-0000-7000-8000-000000000001 is archived");
    const rest = restError(err, REQUEST_ID);
    expect(rest.status).toBe(REASONS[reason].http);
    expect(rest.body.error).toBe(reason);
    expect(rest.body.request_id).toBe(REQUEST_ID);
    expect(toolErrorText(err, REQUEST_ID).startsWith(`${reason}:`)).toBe(true);
  });

  it("pins the status for each reason", () => {
    const statuses = Object.fromEntries(REASON_CODES.map((r) => [r, restError(new AppError(r, "x"), REQUEST_ID).status]));
    expect(statuses).toEqual({
      invalid_input: 400,
      not_found: 404,
      duplicate_memory: 409,
      conflict: 409,
      invalid_transition: 409,
      idempotency_key_reused: 422,
      unauthenticated: 401,
      insufficient_scope: 403,
      rate_limited: 429,
      unavailable: 503,
      internal_error: 500,
    });
  });

  it("invalid_input names the field on both edges", () => {
    const err = new AppError("invalid_input", "content: Too big: expected string to have <=2000 characters", { field: "content" });
    expect(restError(err, REQUEST_ID).body).toEqual({
      error: "invalid_input",
      detail: "content: Too big: expected string to have <=2000 characters",
      field: "content",
      request_id: REQUEST_ID,
    });
    expect(toolErrorText(err, REQUEST_ID)).toBe("invalid_input: content: Too big: expected string to have <=2000 characters");
    // A message that does not lead with the field still gets it named.
    expect(toolErrorText(new AppError("invalid_input", "must be kebab-case", { field: "scope" }), REQUEST_ID)).toBe("invalid_input: scope: must be kebab-case");
  });

  it("unavailable tells the caller to retry later, with Retry-After on REST", () => {
    const fromRpc = new AppError("unavailable", "memory service unavailable, retry later", { retryable: true });
    expect(toolErrorText(fromRpc, REQUEST_ID)).toBe("unavailable: memory service unavailable, retry later");
    expect(toolErrorText(new AppError("unavailable", "search is draining"), REQUEST_ID)).toBe("unavailable: search is draining, retry later");
    expect(restError(fromRpc, REQUEST_ID).headers).toEqual({ "Retry-After": "1" });
  });

  it("unauthenticated carries the bearer challenge on REST", () => {
    expect(restError(new AppError("unauthenticated", "invalid API key"), REQUEST_ID).headers["WWW-Authenticate"]).toBe('Bearer realm="3ngram"');
  });

  it("insufficient_scope names the missing scope", () => {
    const err = new AppError("insufficient_scope", "memory:write required");
    expect(toolErrorText(err, REQUEST_ID)).toBe("insufficient_scope: memory:write required");
    expect(restError(err, REQUEST_ID)).toMatchObject({ status: 403, body: { error: "insufficient_scope", detail: "memory:write required" } });
  });

  it("ids travel in the REST body", () => {
    const err = new AppError("duplicate_memory", "an identical live memory exists", { ids: { existing: "0190c0de-0000-7000-8000-000000000001" } });
    expect(restError(err, REQUEST_ID).body.ids).toEqual({ existing: "0190c0de-0000-7000-8000-000000000001" });
  });

  it("our own failures are never described to the caller", () => {
    const internal = new AppError("internal_error", "relation memories does not exist");
    expect(toolErrorText(internal, REQUEST_ID)).toBe("internal_error: request req-123");
    expect(restError(internal, REQUEST_ID).body).toEqual({ error: "internal_error", request_id: REQUEST_ID });

    const { result, appError } = toolError(new Error("SELECT secret FROM somewhere"), REQUEST_ID);
    expect(appError.reason).toBe("internal_error");
    expect(result).toEqual({ isError: true, content: [{ type: "text", text: "internal_error: request req-123" }] });
  });
});
