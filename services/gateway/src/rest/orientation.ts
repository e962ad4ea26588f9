/**
 * Orientation over REST, with the same schemas and service calls as the tools:
 *
 *   GET  /api/v1/briefing     the briefing tool over a query string: kind, scope, project,
 *                             includeUnscoped (true|false), mode, sections (comma list), sectionLimit,
 *                             since (a changesCursor)
 *   POST /api/v1/handoff      the handoff tool's input as a JSON body (its selector is an object)
 *   GET  /api/v1/environment  describe_environment (no parameters)
 *
 * All three only read and need memory:read. Errors name the query parameter the caller sent.
 */
import { AppError, invalidInput, type ValidationIssue } from "@3ngram/errors";
import { SCOPES } from "@3ngram/rpc";
import {
  briefingInputSchema,
  briefingOutputSchema,
  briefingSectionSchema,
  describeEnvironmentInputSchema,
  describeEnvironmentOutputSchema,
  effectiveSelectorSchema,
  handoffInputSchema,
  handoffOutputSchema,
  parseInput,
  projectSchema,
  scopeNameSchema,
  type BriefingInput,
} from "@3ngram/schema";
import { z } from "zod";
import { describeEnvironment } from "../clients/orientation.js";
import { surfaceInfo } from "../mcp/catalog.js";
import { fieldAt } from "./openapi.js";
import type { QueryParam, RestRoute } from "./route.js";

/**
 * GET /briefing's parameters: the selector's fields flat, plus mode, a comma list of sections and
 * sectionLimit. briefingQueryToInput accepts exactly these names.
 */
const BRIEFING_QUERY: Record<string, QueryParam> = {
  kind: { schema: effectiveSelectorSchema.shape.kind, description: "required: all, scope, project or scope_project", required: true },
  scope: { schema: scopeNameSchema, description: "with kind scope or scope_project, and only then", required: false },
  project: { schema: projectSchema, description: "with kind project or scope_project, and only then", required: false },
  includeUnscoped: { schema: z.boolean().default(false), description: "with kind scope_project only: add the scope's memories without a project" },
  mode: { schema: fieldAt(briefingInputSchema, ["mode"]) },
  sections: { schema: { type: "string", description: `comma-separated: ${briefingSectionSchema.options.join(", ")}` } },
  sectionLimit: { schema: fieldAt(briefingInputSchema, ["sectionLimit"]) },
  since: {
    schema: fieldAt(briefingInputSchema, ["since"]),
    description: "a changesCursor from an earlier briefing with the same selector: only what changed since",
  },
};
const BRIEFING_PARAMS = new Set(Object.keys(BRIEFING_QUERY));
/** Query parameters that belong to the selector; the rest are top-level briefing fields. */
const SELECTOR_PARAMS = new Set(["kind", "scope", "project", "includeUnscoped"]);

export const ORIENTATION_ROUTES: readonly RestRoute[] = [
  {
    method: "get",
    path: "/api/v1/briefing",
    summary: "briefing: what needs attention, for a selector",
    tag: "orientation",
    scope: SCOPES.read,
    query: BRIEFING_QUERY,
    answers: { 200: { description: "the briefing", json: briefingOutputSchema } },
    handle: async ({ req, res, memory, identity }) => {
      const input = briefingQueryToInput(req.query);
      const answer = await memory.orientation.briefing(input, { identity }).catch((err: unknown) => {
        throw flattenSelectorField(err);
      });
      res.json(answer);
    },
  },
  {
    method: "post",
    path: "/api/v1/handoff",
    summary: "handoff: a bounded export for another agent",
    tag: "orientation",
    scope: SCOPES.read,
    body: { schema: handoffInputSchema },
    answers: { 200: { description: "the handoff", json: handoffOutputSchema } },
    handle: async ({ req, res, memory, identity }) => res.json(await memory.orientation.handoff(parseInput(handoffInputSchema, req.body), { identity })),
  },
  {
    method: "get",
    path: "/api/v1/environment",
    summary: "describe_environment",
    tag: "orientation",
    scope: SCOPES.read,
    answers: { 200: { description: "the environment", json: describeEnvironmentOutputSchema } },
    handle: async ({ req, res, memory, identity }) => {
      parseInput(describeEnvironmentInputSchema, { ...req.query });
      res.json(await describeEnvironment(memory, identity, surfaceInfo()));
    },
  },
];

/**
 * Query string → validated briefing input: the selector fields are gathered into `selector`,
 * `sections=a,b` becomes a list, numbers and booleans are read from their text. Unknown or
 * repeated parameters are refused, like unknown tool keys.
 */
export function briefingQueryToInput(query: Record<string, unknown>): BriefingInput {
  const selector: Record<string, unknown> = {};
  const input: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(query)) {
    if (!BRIEFING_PARAMS.has(name)) throw new AppError("invalid_input", `${name}: unknown query parameter`, { field: name });
    if (typeof value !== "string") throw new AppError("invalid_input", `${name}: give this parameter once`, { field: name });
    if (SELECTOR_PARAMS.has(name)) selector[name] = name === "includeUnscoped" ? booleanFromQuery(value) : value;
    else if (name === "sections") input.sections = value.split(",").map((s) => s.trim());
    else if (name === "sectionLimit") input.sectionLimit = numberFromQuery(value);
    else input[name] = value;
  }
  if (selector.kind === undefined) throw new AppError("invalid_input", "kind: required (all, scope, project or scope_project)", { field: "kind" });
  const parsed = briefingInputSchema.safeParse({ ...input, selector });
  if (parsed.success) return parsed.data;
  throw invalidInput(parsed.error.issues.map(toQueryIssue));
}

/** "true" / "false" → booleans; anything else is left for the schema to refuse by name. */
function booleanFromQuery(value: string): unknown {
  return value === "true" ? true : value === "false" ? false : value;
}

/** "12" → 12; anything else is left for the schema to refuse by name. */
function numberFromQuery(value: string): unknown {
  if (value.trim() === "") return value;
  const n = Number(value);
  return Number.isFinite(n) ? n : value;
}

/** selector.scope → scope: the flat parameter the caller sent (a problem with the selector as a whole is kind's). */
function toQueryIssue(issue: ValidationIssue): ValidationIssue {
  const [head, ...rest] = issue.path;
  if (head !== "selector") return issue;
  return { ...issue, path: rest.length > 0 ? rest : ["kind"] };
}

/** A refusal about selector.kind (e.g. the `require` retrieval policy) names the flat parameter, kind. */
function flattenSelectorField(err: unknown): unknown {
  if (!(err instanceof AppError) || !err.details.field?.startsWith("selector.")) return err;
  const field = err.details.field.slice("selector.".length);
  const message = err.message.startsWith(err.details.field) ? field + err.message.slice(err.details.field.length) : err.message;
  return new AppError(err.reason, message, { ...err.details, field });
}
