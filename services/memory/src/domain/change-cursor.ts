/**
 * Change cursors (ADR-0022): what briefing and handoff hand out as `changesCursor` and take back
 * as `since`. A cursor carries the read's snapshot and clock and a fingerprint of its selector,
 * signed with HMAC-SHA256 over the tenant id by a key kept in the database (one per deployment),
 * so any memory replica accepts it, and a cursor altered, issued to another tenant or by another
 * deployment, issued for another selector, or too old is refused with invalid_input naming
 * `since` — never silently read as "nothing changed".
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { AppError } from "@3ngram/errors";
import type { Pool, Queryable } from "@3ngram/db";
import { MAX_CHANGES_CURSOR_AGE_DAYS, type EffectiveSelector } from "@3ngram/schema";
import { selectChangeCursorSecret, selectPointAge, type ChangePoint } from "../db/changes.js";

const VERSION = 1;

const payloadSchema = z.strictObject({
  v: z.number(),
  s: z.string().regex(/^\d+:\d+:(\d+(,\d+)*)?$/),
  t: z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/),
  f: z.string().regex(/^[0-9a-f]{16}$/),
});

/** Whose cursor it is: the tenant (only in the signature) and the selector the read used. */
export interface CursorOwner {
  tenantId: string;
  selector: EffectiveSelector;
}

/** The database's key, read once per pool (it never changes). */
const keys = new WeakMap<Pool, Promise<Buffer>>();

export function changeCursorKey(pool: Pool, db: Queryable): Promise<Buffer> {
  let key = keys.get(pool);
  if (key === undefined) {
    key = selectChangeCursorSecret(db).then((secret) => {
      if (secret === undefined) throw new AppError("internal_error", "no change cursor key (run the migrations)");
      return Buffer.from(secret, "hex");
    });
    keys.set(pool, key);
    key.catch(() => keys.delete(pool));
  }
  return key;
}

function fingerprint(selector: EffectiveSelector): string {
  const canonical = JSON.stringify([selector.kind, selector.scope ?? null, selector.project ?? null, selector.includeUnscoped ?? null]);
  return createHash("sha256").update(canonical).digest("hex").slice(0, 16);
}

function sign(key: Buffer, owner: CursorOwner, body: string): Buffer {
  return createHmac("sha256", key).update(`${VERSION}\n${owner.tenantId}\n${body}`).digest();
}

export function issueCursor(key: Buffer, owner: CursorOwner, point: ChangePoint): string {
  const body = Buffer.from(JSON.stringify({ v: VERSION, s: point.snapshot, t: point.at, f: fingerprint(owner.selector) }), "utf8").toString("base64url");
  return `${body}.${sign(key, owner, body).toString("base64url")}`;
}

const retry = "leave since out to read the whole briefing and get a new cursor";

function refused(why: string): AppError {
  return new AppError("invalid_input", `since: ${why}; ${retry}`, { field: "since" });
}

/** The point a presented cursor names, once it is known to be this tenant's, for this selector, and recent. */
export async function acceptCursor(db: Queryable, key: Buffer, owner: CursorOwner, cursor: string): Promise<ChangePoint> {
  const [body, mac, ...rest] = cursor.split(".");
  const presented = Buffer.from(mac ?? "", "base64url");
  const expected = body === undefined ? Buffer.alloc(0) : sign(key, owner, body);
  // Decoding ignores the spare low bits of the last base64url character, so a string that differs
  // from the one issued can decode to the same bytes: only the canonical spelling is this server's.
  const canonical = mac !== undefined && presented.toString("base64url") === mac;
  if (rest.length > 0 || !canonical || presented.length !== expected.length || !timingSafeEqual(presented, expected)) {
    throw refused("not a changesCursor this server issued to you (altered, or from another tenant or deployment)");
  }
  let payload: z.infer<typeof payloadSchema>;
  try {
    payload = payloadSchema.parse(JSON.parse(Buffer.from(body!, "base64url").toString("utf8")));
  } catch {
    throw refused("not a changesCursor this server can read");
  }
  if (payload.v !== VERSION) throw refused("issued by another version of this server");
  if (payload.f !== fingerprint(owner.selector)) throw refused("issued for a different selector: pass the selector it came with");
  const point = { snapshot: payload.s, at: payload.t };
  const { inPast, ageDays } = await selectPointAge(db, point);
  if (!inPast) throw refused("not from this database's history (was it restored from a backup?)");
  if (ageDays > MAX_CHANGES_CURSOR_AGE_DAYS) throw refused(`older than ${MAX_CHANGES_CURSOR_AGE_DAYS} days`);
  return point;
}
