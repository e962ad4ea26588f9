/**
 * The security headers every server-rendered HTML page of the gateway sends (the OAuth consent page
 * and the web UI; their markup comes from ./html.ts). Pages carry no script at all; the CSP says so.
 */
import type { Response } from "express";

export interface PageHeaderOptions {
  /** Origins (besides 'self') a form on the page may post to. */
  formTargets?: readonly string[];
  /** Allow stylesheets served by this origin (`<link rel="stylesheet">`); inline style stays forbidden. */
  selfStyles?: boolean;
}

/** Security headers for an HTML page: nothing loads but what the options allow, never framed, never cached. */
export function setPageHeaders(res: Response, options: PageHeaderOptions = {}): void {
  const formAction = ["'self'", ...(options.formTargets ?? [])].join(" ");
  const style = options.selfStyles ? "; style-src 'self'" : "";
  res.set({
    "Content-Security-Policy": `default-src 'none'${style}; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    Pragma: "no-cache",
  });
}
