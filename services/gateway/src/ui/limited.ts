/** The review UI's answer when a rate-limit layer refuses: an HTML page, with Retry-After like the API's 429. */
import type { Logger } from "@3ngram/runtime";
import { setPageHeaders } from "../http/html-page.js";
import { requestIdOf } from "../http/locals.js";
import type { LimitedResponder } from "../ratelimit/middleware.js";
import { messagePage } from "./layout.js";

export function uiLimited(log: Logger): LimitedResponder {
  return (res, quota, layer) => {
    log.warn({ request_id: requestIdOf(res), reason: "rate_limited", layer }, "request refused");
    setPageHeaders(res, { selfStyles: true });
    res
      .status(429)
      .set("Retry-After", String(quota.resetSeconds))
      .type("html")
      .send(messagePage("Slow down", `Too many requests; please wait ${quota.resetSeconds} seconds and try again.`));
  };
}
