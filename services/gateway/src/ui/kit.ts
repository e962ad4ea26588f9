/** What every group of UI routes shares: the clients, the page writer, the session and the form guards. */
import type { Logger } from "@3ngram/runtime";
import type { RequestHandler, Response } from "express";
import type { MemoryPeer } from "../clients/memory.js";
import type { SearchPeer } from "../clients/search.js";
import type { SignedIn } from "./layout.js";
import type { UiSession } from "./session.js";

/** Where the UI's cookies apply. */
export const UI_COOKIE_PATH = "/ui";
/** Where a signed-in person lands. */
export const UI_HOME = "/ui/overview";
/** The largest form body a UI page reads. */
export const UI_FORM_BYTES = 16 * 1024;

export interface UiKit {
  memory: MemoryPeer;
  search: SearchPeer;
  log: Logger;
  /** Sends a page with the shared security headers. */
  page(res: Response, status: number, html: string): void;
  /** The header's signed-in state for this request's session. */
  signedInView(res: Response): SignedIn;
  /** The session (or a trip to sign-in) and its rate-limit budgets, before anything else is read. */
  signedIn: RequestHandler[];
  /** A small urlencoded form body. */
  form: RequestHandler;
  /** The session's CSRF token must come back with the form. */
  requireCsrf: RequestHandler;
}

/** After a form: see-other to a page, never cached. */
export function redirect(res: Response, to: string): void {
  res.set("Cache-Control", "no-store");
  res.redirect(303, to);
}

export function sessionOf(res: Response): UiSession {
  const session = res.locals.uiSession as UiSession | undefined;
  if (session === undefined) throw new Error("route reached without a session");
  return session;
}

/** The text a form field was sent with ("" when absent or repeated). */
export function field(source: unknown, name: string): string {
  if (typeof source !== "object" || source === null || !Object.hasOwn(source, name)) return "";
  const value = (source as Record<string, unknown>)[name];
  return typeof value === "string" ? value : "";
}
