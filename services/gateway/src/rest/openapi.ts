/**
 * The REST API's OpenAPI 3.1 contract, generated from the route lists the gateway serves
 * (route.ts) and the zod schemas those routes validate with (zod 4's JSON Schema output, draft
 * 2020-12, which is OpenAPI 3.1's schema dialect). Request shapes are converted as inputs (what a
 * caller may send: defaults optional, unknown keys refused), answers as outputs (open objects, so
 * an additive field never breaks a generated client).
 */
import {
  configureScopeInputSchema,
  configureScopeOutputSchema,
  memoryRecordSchema,
  readinessOutputSchema,
  rememberInputSchema,
  rememberOutputSchema,
  restErrorOutputSchema,
  reviewProposalsOutputSchema,
  searchInputSchema,
  searchOutputSchema,
  MAX_IMPORT_BODY_BYTES,
  MAX_REQUEST_BODY_BYTES,
} from "@3ngram/schema";
import { z } from "zod";
import { SERVER_VERSION } from "../mcp/catalog.js";
import type { Json, QueryParam, RestRoute } from "./route.js";

const ID = "The memory's id (UUID). A malformed, unknown or another tenant's id is 404 alike.";
const NDJSON = "application/x-ndjson";

/** Query parameters from a flat query schema's fields. */
export function queryOf(schema: z.ZodObject, repeatable: readonly string[] = []): Record<string, QueryParam> {
  return Object.fromEntries(
    Object.entries(schema.shape).map(([name, field]) => [name, { schema: field as z.ZodType, ...(repeatable.includes(name) ? { repeatable: true } : {}) }]),
  );
}

/** The field at `path` inside nested (optional, defaulted) objects. */
export function fieldAt(schema: z.ZodType, path: readonly string[]): z.ZodType {
  let current: z.ZodType = schema;
  for (const key of path) {
    while (current instanceof z.ZodOptional || current instanceof z.ZodDefault) current = current._zod.def.innerType as z.ZodType;
    current = (current as z.ZodObject).shape[key] as z.ZodType;
  }
  return current;
}

const ERROR_TEXT: Record<number, string> = {
  400: "invalid input: `field` names the parameter or body path",
  401: "no valid API key or access token",
  403: "the credential lacks the scope this route needs",
  404: "unknown (or another tenant's) id",
  409: "conflict: duplicate, already decided, not live, or an illegal transition",
  413: "body too large",
  415: "unsupported media type",
  422: "this idempotency key was already used for a different request",
  429: "rate limited (Retry-After is set)",
  500: "our fault; only the request id is given",
  503: "a service is unavailable (Retry-After is set)",
};
/** What any authenticated route may answer. */
const COMMON_ERRORS = [400, 401, 403, 429, 500, 503];

/** One conversion per schema and direction; `$schema` is implied by the document's dialect. */
export function jsonOf(schema: z.ZodType, io: "input" | "output"): Json {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { target: "draft-2020-12", io, unrepresentable: "any" }) as Json;
  return json;
}

function withoutFields(json: Json, omit: readonly string[]): Json {
  const properties = { ...(json.properties as Json | undefined) };
  for (const name of omit) delete properties[name];
  const required = (json.required as string[] | undefined)?.filter((n) => !omit.includes(n));
  return { ...json, properties, ...(required ? { required } : {}) };
}

function operationId(route: RestRoute): string {
  const words = route.path
    .replace(/^\/api\/v1\//, "")
    .replace(/^\//, "")
    .split(/[/.-]/)
    .filter(Boolean)
    .map((w) => (w === ":id" ? "ById" : w));
  return [route.method, ...words].map((w, i) => (i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1))).join("");
}

function operation(route: RestRoute, components: Components): Json {
  const parameters: Json[] = [];
  if (route.path.includes(":id"))
    parameters.push({
      name: "id",
      in: "path",
      required: true,
      description: route.path.includes("proposals") ? "The proposal's id (UUID)." : ID,
      schema: { type: "string" },
    });
  const placed = [
    ...Object.entries(route.query ?? {}).map(([name, param]) => ({ name, param, in: "query" })),
    ...Object.entries(route.headers ?? {}).map(([name, param]) => ({ name, param, in: "header" })),
  ];
  for (const { name, param, in: where } of placed) {
    const schema = param.schema instanceof z.ZodType ? jsonOf(param.schema, "input") : param.schema;
    const required = param.required ?? (param.schema instanceof z.ZodType ? !param.schema.safeParse(undefined).success : false);
    parameters.push({
      name,
      in: where,
      required,
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
    ...(route.scope
      ? { security: [{ bearer: [] }], description: `Needs ${typeof route.scope === "string" ? route.scope : route.scope.byInput}.` }
      : { security: [] }),
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

/** The document of `routes`, in their order. */
export function openApiDocument(routes: readonly RestRoute[]): Json {
  const components = new Components(NAMED);
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)/g, "{$1}");
    paths[path] = { ...paths[path], [route.method]: operation(route, components) };
  }
  const errorRef = components.ref(restErrorOutputSchema, "output");
  const responses = Object.fromEntries(
    Object.entries(ERROR_TEXT).map(([status, description]) => [`Error${status}`, { description, content: { "application/json": { schema: errorRef } } }]),
  );
  return {
    openapi: "3.1.0",
    info: {
      title: "3ngram REST API",
      version: SERVER_VERSION,
      description: `The same schemas and service calls as the MCP tools. JSON bodies up to ${MAX_REQUEST_BODY_BYTES} bytes; errors are { error, detail?, field?, ids?, request_id }.`,
      license: { name: "Apache-2.0", identifier: "Apache-2.0" },
    },
    servers: [{ url: "/" }],
    tags: [...new Set(routes.map((r) => r.tag))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "An API key (3ng_…) or an OAuth access token." } },
      schemas: components.schemas,
      responses,
    },
  };
}
