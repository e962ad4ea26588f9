/**
 * GET /api/v1/facts: the get_facts tool over a query string. The flat parameters are folded into
 * the tool's own input shape (validAt/asKnownAt → asOf, from/to → range) and validated by the same
 * schema; errors name the query parameter the caller sent. An empty from= or to= selects range
 * mode with that end open.
 */
import { AppError, invalidInput, type ValidationIssue } from "@3ngram/errors";
import { SCOPES } from "@3ngram/rpc";
import { getFactsInputSchema, type GetFactsInput } from "@3ngram/schema";
import { Router, type RequestHandler } from "express";
import type { MemoryPeer } from "../clients/memory.js";
import { routeLabel } from "../http/locals.js";
import { identityFor } from "../http/identity.js";

/** Query parameter → where it lives in the get_facts input. */
export const FACTS_QUERY_PARAMS: Readonly<Record<string, readonly string[]>> = {
  subject: ["subject"],
  predicate: ["predicate"],
  validAt: ["asOf", "validAt"],
  asKnownAt: ["asOf", "asKnownAt"],
  from: ["range", "from"],
  to: ["range", "to"],
  limit: ["limit"],
};

/** Mounted at /api/v1. */
export function factsRouter(memory: MemoryPeer, auth: RequestHandler): Router {
  const router = Router();
  router.get("/facts", routeLabel("GET /api/v1/facts"), auth, async (req, res) => {
    const identity = identityFor(res, SCOPES.read);
    const input = factsQueryToInput(req.query as Record<string, unknown>);
    res.json(await memory.memories.getFacts(input, { identity }));
  });
  return router;
}

/** Query string → validated get_facts input. Unknown parameters are refused, like unknown tool keys. */
export function factsQueryToInput(query: Record<string, unknown>): GetFactsInput {
  const input: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(query)) {
    // Own keys only: a parameter named like a built-in (constructor, __proto__) is just unknown.
    const path = Object.hasOwn(FACTS_QUERY_PARAMS, name) ? FACTS_QUERY_PARAMS[name] : undefined;
    if (path === undefined) throw new AppError("invalid_input", `${name}: unknown query parameter`, { field: name });
    if (value === undefined) continue;
    if (path.length === 1) {
      input[path[0]!] = name === "limit" ? numberFromQuery(value) : value;
      continue;
    }
    const group = (input[path[0]!] ??= {}) as Record<string, unknown>;
    // An empty from= or to= leaves that end of the window open (so ?from= alone is the whole history).
    if (path[0] === "range" && value === "") continue;
    group[path[1]!] = value;
  }
  const parsed = getFactsInputSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw invalidInput(parsed.error.issues.map((issue) => toQueryIssue(issue, query)));
}

/** "12" → 12; anything else is left for the schema to refuse by name. */
function numberFromQuery(value: unknown): unknown {
  if (typeof value !== "string" || value.trim() === "") return value;
  const n = Number(value);
  return Number.isFinite(n) ? n : value;
}

/** Re-points an issue at the query parameter behind it (asOf.validAt → validAt, the range refinement → from/to). */
function toQueryIssue(issue: ValidationIssue, query: Record<string, unknown>): ValidationIssue {
  const dotted = issue.path.map(String).join(".");
  const direct = Object.entries(FACTS_QUERY_PARAMS).find(([, path]) => path.join(".") === dotted);
  if (direct) return { ...issue, path: [direct[0]] };
  if (dotted === "range") return { ...issue, path: [query.from !== undefined ? "from" : "to"] };
  return issue;
}
