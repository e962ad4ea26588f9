/**
 * GET /api/v1/facts: the get_facts tool over a query string. The flat parameters are folded into
 * the tool's own input shape (validAt/asKnownAt → asOf, from/to → range) and validated by the same
 * schema; errors name the query parameter the caller sent. An empty from= or to= selects range
 * mode with that end open.
 */
import { AppError, invalidInput, type ValidationIssue } from "@3ngram/errors";
import { SCOPES } from "@3ngram/rpc";
import { getFactsInputSchema, getFactsOutputSchema, type GetFactsInput } from "@3ngram/schema";
import { fieldAt, jsonOf } from "./openapi.js";
import type { QueryParam, RestRoute } from "./route.js";

/** Query parameter → where it lives in the get_facts input. */
const FACTS_QUERY_PARAMS: Readonly<Record<string, readonly string[]>> = {
  subject: ["subject"],
  predicate: ["predicate"],
  validAt: ["asOf", "validAt"],
  asKnownAt: ["asOf", "asKnownAt"],
  from: ["range", "from"],
  to: ["range", "to"],
  limit: ["limit"],
};

const openEnd = { type: "string", maxLength: 0, description: "empty: leave this end of the range open" };

/** The documented parameters: exactly the ones factsQueryToInput accepts, each with its field's schema. */
const FACTS_QUERY: Record<string, QueryParam> = Object.fromEntries(
  Object.entries(FACTS_QUERY_PARAMS).map(([name, path]) => {
    const field = fieldAt(getFactsInputSchema, path);
    return [name, path[0] === "range" ? { schema: { anyOf: [jsonOf(field, "input"), openEnd] } } : { schema: field }];
  }),
);

export const FACTS_ROUTES: readonly RestRoute[] = [
  {
    method: "get",
    path: "/api/v1/facts",
    summary: "get_facts: now, as of a point, or a valid-time range",
    tag: "facts",
    scope: SCOPES.read,
    query: FACTS_QUERY,
    answers: { 200: { description: "facts", json: getFactsOutputSchema } },
    handle: async ({ req, res, memory, identity }) => res.json(await memory.memories.getFacts(factsQueryToInput(req.query), { identity })),
  },
];

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
