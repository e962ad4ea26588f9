/**
 * The REST API's OpenAPI 3.1 contract, generated from the same zod schemas the routes validate
 * with (zod 4's JSON Schema output, draft 2020-12, which is OpenAPI 3.1's schema dialect). The
 * table below says which schema each route reads and answers; the document is assembled once per
 * process and served at GET /api/v1/openapi.json. Request shapes are converted as inputs (what a
 * caller may send: defaults optional, unknown keys refused), answers as outputs (open objects, so
 * an additive field never breaks a generated client).
 *
 * Query parameters come from the routes' own tables (FACTS_QUERY_PARAMS, BRIEFING_PARAMS) or the
 * flat query schemas, so a parameter cannot be documented without being accepted, or the reverse
 * (the contract test compares them).
 */
import { SCOPES } from "@3ngram/rpc";
import {
  archiveOutputSchema,
  briefingInputSchema,
  briefingModeSchema,
  briefingOutputSchema,
  briefingSectionSchema,
  configureScopeInputSchema,
  configureScopeOutputSchema,
  describeEnvironmentOutputSchema,
  effectiveSelectorSchema,
  eraseInputSchema,
  eraseOneBodySchema,
  eraseOutputSchema,
  facetsOutputSchema,
  getFactsInputSchema,
  getFactsOutputSchema,
  handoffInputSchema,
  handoffOutputSchema,
  healthOutputSchema,
  historyOutputSchema,
  importOutputSchema,
  importQuerySchema,
  listMemoriesInputSchema,
  listMemoriesOutputSchema,
  listProposalsQuerySchema,
  memoryRecordSchema,
  projectSchema,
  readinessOutputSchema,
  rejectProposalBodySchema,
  rememberInputSchema,
  rememberOutputSchema,
  resolveInputSchema,
  resolveOutputSchema,
  restErrorOutputSchema,
  reviewProposalsOutputSchema,
  reviseInputSchema,
  reviseOutputSchema,
  scopeNameSchema,
  searchInputSchema,
  searchOutputSchema,
  MAX_IMPORT_BODY_BYTES,
  MAX_REQUEST_BODY_BYTES,
} from "@3ngram/schema";
import { z } from "zod";
import { SERVER_VERSION } from "../mcp/catalog.js";
import { FACTS_QUERY_PARAMS } from "./facts.js";
import { BRIEFING_PARAMS } from "./orientation.js";

type Json = Record<string, unknown>;
type Method = "get" | "post";

interface QueryParam {
  schema: z.ZodType | Json;
  description?: string;
  /** Repeated keys (?project=a&project=b) rather than one value. */
  repeatable?: boolean;
}

interface Body {
  schema: z.ZodType;
  /** Fields the path supplies, so the body must not carry them. */
  omit?: readonly string[];
  optional?: boolean;
}

interface Answer {
  description: string;
  json?: z.ZodType;
  /** A non-JSON body: its media type and a JSON Schema of it. */
  media?: { type: string; schema: Json };
}

interface Route {
  method: Method;
  /** Express path; `:id` becomes `{id}` in the document. */
  path: string;
  summary: string;
  tag: string;
  /** The scope a caller needs; undefined for the unauthenticated routes. */
  scope?: string;
  query?: Record<string, QueryParam>;
  body?: Body;
  ndjsonBody?: boolean;
  answers: Record<number, Answer>;
  /** Error statuses this route can answer besides the ones every authenticated route can. */
  errors?: number[];
}

const ID = "The memory's id (UUID). A malformed, unknown or another tenant's id is 404 alike.";
const NDJSON = "application/x-ndjson";

/** Query parameters from a flat query schema's fields. */
function queryOf(schema: z.ZodObject, repeatable: readonly string[] = []): Record<string, QueryParam> {
  return Object.fromEntries(
    Object.entries(schema.shape).map(([name, field]) => [name, { schema: field as z.ZodType, ...(repeatable.includes(name) ? { repeatable: true } : {}) }]),
  );
}

/** The field at `path` inside nested (optional, defaulted) objects. */
function fieldAt(schema: z.ZodType, path: readonly string[]): z.ZodType {
  let current: z.ZodType = schema;
  for (const key of path) {
    while (current instanceof z.ZodOptional || current instanceof z.ZodDefault) current = current._zod.def.innerType as z.ZodType;
    current = (current as z.ZodObject).shape[key] as z.ZodType;
  }
  return current;
}

const openEnd = { type: "string", maxLength: 0, description: "empty: leave this end of the range open" };

/** GET /facts: get_facts' fields folded flat, exactly the parameters the route accepts. */
const factsQuery: Record<string, QueryParam> = Object.fromEntries(
  Object.entries(FACTS_QUERY_PARAMS).map(([name, path]) => {
    const field = fieldAt(getFactsInputSchema, path);
    return [name, path[0] === "range" ? { schema: { anyOf: [jsonOf(field, "input"), openEnd] } } : { schema: field }];
  }),
);

/** GET /briefing: the selector's fields flat, plus mode, a comma list of sections and sectionLimit. */
const briefingSchemas: Record<string, QueryParam> = {
  kind: { schema: effectiveSelectorSchema.shape.kind, description: "required: all, scope, project or scope_project" },
  scope: { schema: scopeNameSchema },
  project: { schema: projectSchema },
  includeUnscoped: { schema: z.boolean() },
  mode: { schema: briefingModeSchema },
  sections: { schema: { type: "string", description: `comma-separated: ${briefingSectionSchema.options.join(", ")}` } },
  sectionLimit: { schema: fieldAt(briefingInputSchema, ["sectionLimit"]) },
  since: {
    schema: fieldAt(briefingInputSchema, ["since"]),
    description: "a changesCursor from an earlier briefing with the same selector: only what changed since",
  },
};
const briefingQuery: Record<string, QueryParam> = Object.fromEntries([...BRIEFING_PARAMS].map((name) => [name, briefingSchemas[name]!]));

const REST_ROUTES: readonly Route[] = [
  {
    method: "post",
    path: "/api/v1/memories",
    summary: "remember: append one typed memory",
    tag: "memories",
    scope: SCOPES.write,
    body: { schema: rememberInputSchema },
    answers: { 201: { description: "stored", json: rememberOutputSchema } },
    errors: [409],
  },
  {
    method: "get",
    path: "/api/v1/memories",
    summary: "live memories, newest first, filtered and bounded",
    tag: "memories",
    scope: SCOPES.read,
    query: queryOf(listMemoriesInputSchema, ["memoryTypes", "project"]),
    answers: { 200: { description: "one page", json: listMemoriesOutputSchema } },
  },
  {
    method: "get",
    path: "/api/v1/memories/facets",
    summary: "distinct scopes and projects of live memories",
    tag: "memories",
    scope: SCOPES.read,
    answers: { 200: { description: "facets", json: facetsOutputSchema } },
  },
  {
    method: "get",
    path: "/api/v1/memories/:id",
    summary: "one memory in full",
    tag: "memories",
    scope: SCOPES.read,
    answers: { 200: { description: "the memory", json: memoryRecordSchema } },
    errors: [404],
  },
  {
    method: "post",
    path: "/api/v1/memories/:id/revise",
    summary: "revise: a successor linked to this memory",
    tag: "lifecycle",
    scope: SCOPES.write,
    body: { schema: reviseInputSchema, omit: ["predecessorId"] },
    answers: { 201: { description: "the successor", json: reviseOutputSchema } },
    errors: [404, 409],
  },
  {
    method: "post",
    path: "/api/v1/memories/:id/resolve",
    summary: "resolve: move a commitment (or archive a blocker)",
    tag: "lifecycle",
    scope: SCOPES.write,
    body: { schema: resolveInputSchema, omit: ["memoryId"] },
    answers: { 200: { description: "the move", json: resolveOutputSchema } },
    errors: [404, 409],
  },
  {
    method: "post",
    path: "/api/v1/memories/:id/archive",
    summary: "archive a live memory",
    tag: "lifecycle",
    scope: SCOPES.write,
    answers: { 200: { description: "archived", json: archiveOutputSchema } },
    errors: [404, 409],
  },
  {
    method: "get",
    path: "/api/v1/memories/:id/history",
    summary: "lineage, edges and audit events",
    tag: "lifecycle",
    scope: SCOPES.read,
    answers: { 200: { description: "the history", json: historyOutputSchema } },
    errors: [404],
  },
  {
    method: "post",
    path: "/api/v1/memories/:id/erase",
    summary: "erase one memory's text and everything derived from it",
    tag: "erasure",
    scope: SCOPES.erase,
    body: { schema: eraseOneBodySchema },
    answers: { 200: { description: "erased", json: eraseOutputSchema } },
    errors: [404],
  },
  {
    method: "post",
    path: "/api/v1/erasures",
    summary: "erase memories by ids or a selector (dry run first)",
    tag: "erasure",
    scope: SCOPES.erase,
    body: { schema: eraseInputSchema },
    answers: { 200: { description: "what was (or would be) erased", json: eraseOutputSchema } },
  },
  {
    method: "post",
    path: "/api/v1/search",
    summary: "search: fused or chronological, with the coverage envelope",
    tag: "search",
    scope: SCOPES.read,
    body: { schema: searchInputSchema },
    answers: { 200: { description: "one page of hits", json: searchOutputSchema } },
  },
  {
    method: "get",
    path: "/api/v1/scopes",
    summary: "the scope registry and retrieval default",
    tag: "scopes",
    scope: SCOPES.read,
    answers: { 200: { description: "the registry", json: configureScopeOutputSchema } },
  },
  {
    method: "post",
    path: "/api/v1/scopes",
    summary: "configure_scope: any action (list reads, the rest write)",
    tag: "scopes",
    scope: `${SCOPES.read} for list, else ${SCOPES.write}`,
    body: { schema: configureScopeInputSchema },
    answers: { 200: { description: "done", json: configureScopeOutputSchema }, 201: { description: "created", json: configureScopeOutputSchema } },
    errors: [404, 409],
  },
  {
    method: "get",
    path: "/api/v1/facts",
    summary: "get_facts: now, as of a point, or a valid-time range",
    tag: "facts",
    scope: SCOPES.read,
    query: factsQuery,
    answers: { 200: { description: "facts", json: getFactsOutputSchema } },
  },
  {
    method: "post",
    path: "/api/v1/import",
    summary: "import NDJSON (our export or the MCP memory server's JSONL), one transaction per record",
    tag: "archive",
    scope: SCOPES.write,
    query: queryOf(importQuerySchema),
    ndjsonBody: true,
    answers: { 200: { description: "per-line results", json: importOutputSchema } },
  },
  {
    method: "get",
    path: "/api/v1/export",
    summary: "the whole tenant as NDJSON",
    tag: "archive",
    scope: SCOPES.read,
    answers: { 200: { description: "the archive", media: { type: NDJSON, schema: { type: "string" } } } },
  },
  {
    method: "get",
    path: "/api/v1/briefing",
    summary: "briefing: what needs attention, for a selector",
    tag: "orientation",
    scope: SCOPES.read,
    query: briefingQuery,
    answers: { 200: { description: "the briefing", json: briefingOutputSchema } },
  },
  {
    method: "post",
    path: "/api/v1/handoff",
    summary: "handoff: a bounded export for another agent",
    tag: "orientation",
    scope: SCOPES.read,
    body: { schema: handoffInputSchema },
    answers: { 200: { description: "the handoff", json: handoffOutputSchema } },
  },
  {
    method: "get",
    path: "/api/v1/environment",
    summary: "describe_environment",
    tag: "orientation",
    scope: SCOPES.read,
    answers: { 200: { description: "the environment", json: describeEnvironmentOutputSchema } },
  },
  {
    method: "get",
    path: "/api/v1/proposals",
    summary: "review_proposals list",
    tag: "proposals",
    scope: SCOPES.read,
    query: queryOf(listProposalsQuerySchema),
    answers: { 200: { description: "the list", json: reviewProposalsOutputSchema } },
  },
  {
    method: "post",
    path: "/api/v1/proposals/:id/apply",
    summary: "accept a proposal",
    tag: "proposals",
    scope: SCOPES.write,
    answers: { 200: { description: "applied or applied_fact", json: reviewProposalsOutputSchema } },
    errors: [404, 409],
  },
  {
    method: "post",
    path: "/api/v1/proposals/:id/reject",
    summary: "reject a proposal, optionally saying why",
    tag: "proposals",
    scope: SCOPES.write,
    body: { schema: rejectProposalBodySchema, optional: true },
    answers: { 200: { description: "rejected or rejected_fact", json: reviewProposalsOutputSchema } },
    errors: [404, 409],
  },
  {
    method: "get",
    path: "/api/v1/openapi.json",
    summary: "this document",
    tag: "meta",
    answers: { 200: { description: "OpenAPI 3.1", media: { type: "application/json", schema: { type: "object" } } } },
  },
  { method: "get", path: "/health", summary: "liveness (no I/O)", tag: "meta", answers: { 200: { description: "up", json: healthOutputSchema } } },
  {
    method: "get",
    path: "/ready",
    summary: "readiness: both gRPC peers serving",
    tag: "meta",
    answers: { 200: { description: "ready", json: readinessOutputSchema }, 503: { description: "a peer is not serving", json: readinessOutputSchema } },
  },
  {
    method: "get",
    path: "/metrics",
    summary: "Prometheus metrics",
    tag: "meta",
    answers: { 200: { description: "text exposition format", media: { type: "text/plain", schema: { type: "string" } } } },
  },
];

const ERROR_TEXT: Record<number, string> = {
  400: "invalid input: `field` names the parameter or body path",
  401: "no valid API key or access token",
  403: "the credential lacks the scope this route needs",
  404: "unknown (or another tenant's) id",
  409: "conflict: duplicate, already decided, not live, or an illegal transition",
  413: "body too large",
  415: "unsupported media type",
  429: "rate limited (Retry-After is set)",
  500: "our fault; only the request id is given",
  503: "a service is unavailable (Retry-After is set)",
};
/** What any authenticated route may answer. */
const COMMON_ERRORS = [400, 401, 403, 429, 500, 503];

/** One conversion per schema and direction; `$schema` is implied by the document's dialect. */
function jsonOf(schema: z.ZodType, io: "input" | "output"): Json {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { target: "draft-2020-12", io, unrepresentable: "any" }) as Json;
  return json;
}

function withoutFields(json: Json, omit: readonly string[]): Json {
  const properties = { ...(json.properties as Json | undefined) };
  for (const name of omit) delete properties[name];
  const required = (json.required as string[] | undefined)?.filter((n) => !omit.includes(n));
  return { ...json, properties, ...(required ? { required } : {}) };
}

function operationId(route: Route): string {
  const words = route.path
    .replace(/^\/api\/v1\//, "")
    .replace(/^\//, "")
    .split(/[/.-]/)
    .filter(Boolean)
    .map((w) => (w === ":id" ? "ById" : w));
  return [route.method, ...words].map((w, i) => (i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1))).join("");
}

function operation(route: Route, components: Components): Json {
  const parameters: Json[] = [];
  if (route.path.includes(":id"))
    parameters.push({
      name: "id",
      in: "path",
      required: true,
      description: route.path.includes("proposals") ? "The proposal's id (UUID)." : ID,
      schema: { type: "string" },
    });
  for (const [name, param] of Object.entries(route.query ?? {})) {
    const schema = param.schema instanceof z.ZodType ? jsonOf(param.schema, "input") : param.schema;
    const required = param.schema instanceof z.ZodType ? !param.schema.safeParse(undefined).success : false;
    parameters.push({
      name,
      in: "query",
      required: name === "kind" && route.path.endsWith("/briefing") ? true : required,
      schema,
      ...(param.description ? { description: param.description } : {}),
      ...(param.repeatable ? { style: "form", explode: true } : {}),
    });
  }
  const errors = [...new Set([...(route.scope ? COMMON_ERRORS : []), ...(route.errors ?? []), ...(route.body || route.ndjsonBody ? [413, 415] : [])])].sort();
  const responses: Json = {};
  for (const [status, answer] of Object.entries(route.answers)) {
    const content = answer.json
      ? { "application/json": { schema: components.ref(answer.json, "output") } }
      : answer.media
        ? { [answer.media.type]: { schema: answer.media.schema } }
        : undefined;
    responses[status] = { description: answer.description, ...(content ? { content } : {}) };
  }
  for (const status of errors) responses[String(status)] ??= { $ref: `#/components/responses/Error${status}` };
  const body = route.body
    ? {
        required: !route.body.optional,
        content: {
          "application/json": {
            schema: route.body.omit ? withoutFields(jsonOf(route.body.schema, "input"), route.body.omit) : components.ref(route.body.schema, "input"),
          },
        },
      }
    : route.ndjsonBody
      ? {
          required: true,
          description: `NDJSON, at most ${MAX_IMPORT_BODY_BYTES} bytes`,
          content: { [NDJSON]: { schema: { type: "string" } }, "text/plain": { schema: { type: "string" } } },
        }
      : undefined;
  return {
    operationId: operationId(route),
    summary: route.summary,
    tags: [route.tag],
    ...(route.scope ? { security: [{ bearer: [] }], description: `Needs ${route.scope}.` } : { security: [] }),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(body ? { requestBody: body } : {}),
    responses,
  };
}

/** Named component schemas for the shapes routes share, each converted once. */
class Components {
  readonly schemas: Record<string, Json> = {};

  constructor(private readonly known: ReadonlyMap<z.ZodType, string>) {}

  ref(schema: z.ZodType, io: "input" | "output"): Json {
    const base = this.known.get(schema);
    if (base === undefined) return jsonOf(schema, io);
    const name = `${base}${io === "input" ? "Input" : ""}`;
    this.schemas[name] ??= jsonOf(schema, io);
    return { $ref: `#/components/schemas/${name}` };
  }
}

const NAMED: ReadonlyMap<z.ZodType, string> = new Map<z.ZodType, string>([
  [rememberInputSchema, "Remember"],
  [rememberOutputSchema, "RememberOutput"],
  [memoryRecordSchema, "Memory"],
  [searchInputSchema, "Search"],
  [searchOutputSchema, "SearchOutput"],
  [configureScopeInputSchema, "ConfigureScope"],
  [configureScopeOutputSchema, "ConfigureScopeOutput"],
  [reviewProposalsOutputSchema, "ReviewProposalsOutput"],
  [restErrorOutputSchema, "Error"],
  [readinessOutputSchema, "Readiness"],
]);

let built: Json | undefined;

/** The document, assembled on first use and shared (callers must not mutate it). */
export function openApiDocument(): Json {
  if (built !== undefined) return built;
  const components = new Components(NAMED);
  const paths: Record<string, Json> = {};
  for (const route of REST_ROUTES) {
    const path = route.path.replace(/:(\w+)/g, "{$1}");
    paths[path] = { ...paths[path], [route.method]: operation(route, components) };
  }
  const errorRef = components.ref(restErrorOutputSchema, "output");
  const responses = Object.fromEntries(
    Object.entries(ERROR_TEXT).map(([status, description]) => [`Error${status}`, { description, content: { "application/json": { schema: errorRef } } }]),
  );
  built = {
    openapi: "3.1.0",
    info: {
      title: "3ngram REST API",
      version: SERVER_VERSION,
      description: `The same schemas and service calls as the MCP tools. JSON bodies up to ${MAX_REQUEST_BODY_BYTES} bytes; errors are { error, detail?, field?, ids?, request_id }.`,
      license: { name: "Apache-2.0", identifier: "Apache-2.0" },
    },
    servers: [{ url: "/" }],
    tags: [...new Set(REST_ROUTES.map((r) => r.tag))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "An API key (3ng_…) or an OAuth access token." } },
      schemas: components.schemas,
      responses,
    },
  };
  return built;
}
