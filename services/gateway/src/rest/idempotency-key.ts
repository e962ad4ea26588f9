/**
 * The REST form of a write's idempotency key: the `Idempotency-Key` request header of the IETF
 * httpapi draft. Its value is a structured-field String ("…", quoted); the bare form many clients
 * send (Stripe's) is accepted too. The key joins the body as `idempotencyKey`, the field the MCP
 * tools take, so both surfaces share one schema and one meaning.
 */
import { AppError } from "@3ngram/errors";
import { idempotencyKeySchema } from "@3ngram/schema";
import type { Request } from "express";
import type { QueryParam } from "./route.js";

const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";

/** The header as the OpenAPI document lists it on each write that reads it (those routes also answer 422). */
export const IDEMPOTENCY_KEY_PARAMS: Record<string, QueryParam> = {
  [IDEMPOTENCY_KEY_HEADER]: {
    schema: { type: "string", minLength: 1, maxLength: 257 },
    description:
      "a key for this write (a quoted UUID, say): a repeat with the same key and body answers as the first did; the same key with another body is refused with 422. The body's idempotencyKey does the same.",
  },
};

/**
 * The body with the header's key in it. Without the header, or with a body that is not an object
 * (the schema refuses that anyway), the body is returned as it came.
 */
export function withIdempotencyKey<T>(req: Request, body: T): T {
  const raw = req.get(IDEMPOTENCY_KEY_HEADER);
  if (raw === undefined || body === null || typeof body !== "object" || Array.isArray(body)) return body;
  const key = idempotencyKeySchema.safeParse(unquote(raw.trim()));
  if (!key.success) {
    throw new AppError("invalid_input", `${IDEMPOTENCY_KEY_HEADER}: must be 1 to 255 visible ASCII characters, e.g. a quoted UUID`, {
      field: IDEMPOTENCY_KEY_HEADER,
    });
  }
  const given = (body as { idempotencyKey?: unknown }).idempotencyKey;
  if (given !== undefined && given !== key.data) {
    throw new AppError("invalid_input", `${IDEMPOTENCY_KEY_HEADER}: differs from the body's idempotencyKey; send one of them`, {
      field: IDEMPOTENCY_KEY_HEADER,
    });
  }
  return { ...body, idempotencyKey: key.data };
}

/** A structured-field String's content (RFC 9651 §3.3.3: backslash escapes only `"` and `\`); other values as they are. */
function unquote(value: string): string {
  if (value.length < 2 || !value.startsWith('"') || !value.endsWith('"')) return value;
  return value.slice(1, -1).replace(/\\(["\\])/g, "$1");
}
