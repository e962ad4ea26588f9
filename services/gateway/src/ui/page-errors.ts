/** A failed UI request as an HTML page with the reason table's status; our own failures are described only in the logs. */
import { AppError, REASONS, toAppError } from "@3ngram/errors";
import type { Logger } from "@3ngram/runtime";
import type { ErrorRequestHandler, Response } from "express";
import { requestIdOf } from "../http/locals.js";
import { requestFault } from "../http/request-faults.js";
import { logError } from "../rest/errors.js";
import { UI_FORM_BYTES } from "./kit.js";
import { messagePage, type SignedIn } from "./layout.js";

const TITLES: Partial<Record<string, string>> = {
  invalid_input: "Not understood",
  not_found: "Not found",
  insufficient_scope: "Not allowed",
  conflict: "Not changed",
  rate_limited: "Slow down",
  unavailable: "Temporarily unavailable",
};

export function pageErrors(
  log: Logger,
  page: (res: Response, status: number, html: string) => void,
  signedIn: (res: Response) => SignedIn | undefined,
): ErrorRequestHandler {
  return (err, _req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const fault = requestFault(err, { maxBodyBytes: UI_FORM_BYTES });
    const appError = fault === undefined ? toAppError(err) : new AppError(fault.reason, fault.reason === "not_found" ? "no such page" : "unreadable form");
    logError(log, err, appError, requestIdOf(res));
    const { reason } = appError;
    const text =
      reason === "internal_error"
        ? `Something went wrong on our side (request ${requestIdOf(res)}).`
        : reason === "unavailable"
          ? "The memory service cannot be reached right now. Please try again shortly."
          : appError.details.field
            ? `${appError.message} (${appError.details.field})`
            : appError.message;
    page(res, fault?.status ?? REASONS[reason].http, messagePage(TITLES[reason] ?? "Something went wrong", text, signedIn(res)));
  };
}
