import { AppError } from "@3ngram/errors";

// Every refusal names the client_id parameter (the input that led to the fetch) and says what was
// wrong in words; none repeats the fetched document, which is attacker-controlled text.

/** The URL, an address, the response or the document is unacceptable: the caller's problem. */
export function refused(message: string): AppError {
  return new AppError("invalid_input", `client_id: ${message}`, { field: "client_id" });
}

/** The host could not be reached (in time): may work later. */
export function unreachable(message: string, retryable: boolean): AppError {
  return new AppError("unavailable", `client_id: ${message}`, { field: "client_id", retryable });
}
