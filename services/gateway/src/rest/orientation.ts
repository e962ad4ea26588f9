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
import { briefingInputSchema, describeEnvironmentInputSchema, handoffInputSchema, parseInput, type BriefingInput } from "@3ngram/schema";
import { Router, type RequestHandler } from "express";
import type { MemoryPeer } from "../clients/memory.js";
import { describeEnvironment } from "../clients/orientation.js";
import { routeLabel } from "../http/locals.js";
import { surfaceInfo } from "../mcp/catalog.js";
import { jsonBody } from "./body.js";
import { identityFor } from "../http/identity.js";

/** Query parameters that belong to the selector; the rest are top-level briefing fields. */
const SELECTOR_PARAMS = new Set(["kind", "scope", "project", "includeUnscoped"]);
export const BRIEFING_PARAMS = new Set([...SELECTOR_PARAMS, "mode", "sections", "sectionLimit", "since"]);

/** Mounted at /api/v1; `auth` runs before anything is read. */
export function orientationRouter(memory: MemoryPeer, auth: RequestHandler): Router {
  const router = Router();

  router.get("/briefing", routeLabel("GET /api/v1/briefing"), auth, async (req, res) => {
    const identity = identityFor(res, SCOPES.read);
    const input = briefingQueryToInput(req.query as Record<string, unknown>);
    const answer = await memory.orientation.briefing(input, { identity }).catch((err: unknown) => {
      throw flattenSelectorField(err);
    });
    res.json(answer);
  });

  router.post("/handoff", routeLabel("POST /api/v1/handoff"), auth, ...jsonBody(), async (req, res) => {
    const identity = identityFor(res, SCOPES.read);
    const input = parseInput(handoffInputSchema, req.body);
    res.json(await memory.orientation.handoff(input, { identity }));
  });

  router.get("/environment", routeLabel("GET /api/v1/environment"), auth, async (req, res) => {
    const identity = identityFor(res, SCOPES.read);
    parseInput(describeEnvironmentInputSchema, { ...req.query });
    res.json(await describeEnvironment(memory, identity, surfaceInfo()));
  });

  return router;
}

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
