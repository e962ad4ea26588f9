/**
 * The one OpenAI-compatible client: the official `openai` SDK, set up the way both of its users
 * need it (the embedder here and the consolidator's optional fact extractor). The SDK owns the
 * HTTP: URLs, headers, JSON, timeouts, abort. This module owns what the SDK does not decide for
 * us: no retries inside a call (our queues retry, with their own backoff), no environment
 * variables read behind the operator's back, no Authorization header without a key (keyless local
 * servers such as Ollama), and failures described without a word of the server's body, which may
 * echo the request (memory content) or the key.
 */
import { STATUS_CODES } from "node:http";
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";
import { isRetryableUpstreamStatus } from "@3ngram/errors";

export interface OpenAIClientOptions {
  /** API root, e.g. "https://api.openai.com/v1". */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>` when set and non-empty. */
  apiKey?: string | undefined;
  /** Per-request timeout in milliseconds. */
  timeoutMs: number;
  /** Fetch implementation; defaults to the global `fetch`. */
  fetch?: typeof fetch | undefined;
}

/** A configured client plus the endpoint root as it may appear in messages (no credentials, no query). */
export interface OpenAIClient {
  sdk: OpenAI;
  where: string;
}

/** Builds the client; throws RangeError for a base URL that is not http(s). */
export function createOpenAIClient(options: OpenAIClientOptions, owner: string): OpenAIClient {
  let url: URL;
  try {
    url = new URL(options.baseUrl.replace(/\/+$/, ""));
  } catch {
    throw new RangeError(`${owner}: baseUrl is not a valid URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new RangeError(`${owner}: baseUrl must use http or https`);
  const keyed = options.apiKey !== undefined && options.apiKey !== "";
  const sdk = new OpenAI({
    baseURL: url.toString().replace(/\/+$/, ""),
    // The SDK insists on a key; without one the header is removed below, so this value is never sent.
    apiKey: keyed ? options.apiKey! : "unused",
    organization: null,
    project: null,
    maxRetries: 0,
    // The SDK's own logging could print requests (memory content) and is not ours to route.
    logLevel: "off",
    timeout: options.timeoutMs,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(keyed ? {} : { defaultHeaders: { Authorization: null } }),
  });
  return { sdk, where: `${url.origin}${url.pathname.replace(/\/+$/, "")}` };
}

/** What a failed call was, in words safe to log, and whether trying again later can help. */
export interface OpenAIFailure {
  message: string;
  retryable: boolean;
  status?: number;
}

/**
 * Describes an SDK failure of a request to `endpoint`. The caller's own abort is not a failure:
 * it answers null so the caller rethrows its abort reason. Of an HTTP error only the status, Node's
 * reason phrase and a short machine-readable code are kept.
 */
export function describeOpenAIFailure(error: unknown, endpoint: string, timeoutMs: number, callerSignal?: AbortSignal): OpenAIFailure | null {
  if (callerSignal?.aborted) return null;
  if (error instanceof APIConnectionTimeoutError) return { message: `request to ${endpoint} timed out after ${timeoutMs} ms`, retryable: true };
  if (error instanceof APIUserAbortError) return { message: `request to ${endpoint} was aborted`, retryable: true };
  if (error instanceof APIConnectionError) {
    // fetch reports network failures with a system error as the cause; only its code is kept.
    const cause = (error.cause as { cause?: { code?: unknown }; code?: unknown } | undefined) ?? undefined;
    const code = [cause?.code, cause?.cause?.code].find((c): c is string => typeof c === "string") ?? "connection error";
    return { message: `request to ${endpoint} failed: ${code}`, retryable: true };
  }
  if (error instanceof APIError && typeof error.status === "number") {
    const phrase = STATUS_CODES[error.status];
    const code = [error.code, error.type].find((c): c is string => typeof c === "string" && /^[A-Za-z0-9_.-]{1,64}$/.test(c));
    return {
      message: `request to ${endpoint} failed: HTTP ${error.status}${phrase ? ` ${phrase}` : ""}${code ? ` (${code})` : ""}`,
      retryable: isRetryableUpstreamStatus(error.status),
      status: error.status,
    };
  }
  // A 2xx body the SDK could not read (not JSON, say): the server is misbehaving, not away.
  return { message: `response from ${endpoint} could not be read`, retryable: false };
}
