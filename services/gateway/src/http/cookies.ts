/** Reading cookies and comparing the tokens they carry, for the HTML forms (consent page, review UI). */
import { timingSafeEqual } from "node:crypto";
import type { Request } from "express";

/** The first cookie called `name`, or undefined. */
export function cookieValue(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) return rest.join("=");
  }
  return undefined;
}

/** Constant-time equality of two non-empty tokens; a missing one never matches. */
export function sameToken(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined || a.length === 0 || a.length !== b.length) return false;
  return timingSafeEqual(Buffer.from(a), Buffer.from(b));
}
