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

/**
 * Constant-time equality of two non-empty tokens; a missing one never matches. Lengths are
 * compared in bytes: a sent token of the right length in characters but with a non-ASCII one in it
 * is longer in UTF-8, and timingSafeEqual throws on buffers of different lengths.
 */
export function sameToken(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined || a.length === 0) return false;
  const [x, y] = [Buffer.from(a), Buffer.from(b)];
  return x.length === y.length && timingSafeEqual(x, y);
}
