/**
 * One HTTP route as data: what the OpenAPI document says about it and the handler that serves it.
 * Each REST module exports a list of these; mountRoutes serves a list and openapi.ts documents the
 * same list, so a route cannot be served without being documented, or the reverse.
 */
import type { CallerIdentity, Scope } from "@3ngram/rpc";
import type { Logger } from "@3ngram/runtime";
import { Router, type Request, type RequestHandler, type Response } from "express";
import type { z } from "zod";
import type { MemoryPeer } from "../clients/memory.js";
import type { SearchPeer } from "../clients/search.js";
import type { PeerChecks } from "../http/health.js";
import { identityFor } from "../http/identity.js";
import { routeLabel } from "../http/locals.js";
import type { GatewayMetrics } from "../http/metrics.js";
import { jsonBody } from "./body.js";

export type Json = Record<string, unknown>;

export interface QueryParam {
  /** A zod schema (converted as an input) or JSON Schema written out. */
  schema: z.ZodType | Json;
  description?: string;
  /** Repeated keys (?project=a&project=b) rather than one value. */
  repeatable?: boolean;
  /** Required although the schema alone would accept its absence (the route checks it). */
  required?: boolean;
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

interface RouteContract {
  method: "get" | "post";
  /** The full Express path; `:id` becomes `{id}` in the document. */
  path: string;
  summary: string;
  tag: string;
  query?: Record<string, QueryParam>;
  /** Request headers the route reads besides authentication (documented as header parameters). */
  headers?: Record<string, QueryParam>;
  /** A JSON body, read before the handler runs (other media types 415, oversized 413). */
  body?: Body;
  /** An NDJSON body the handler reads itself, as a stream. */
  ndjsonBody?: boolean;
  answers: Record<number, Answer>;
  /** Error statuses this route can answer besides the ones every authenticated route can. */
  errors?: number[];
}

/** What handlers are given: the peers and process parts they call. */
export interface RouteDeps {
  memory: MemoryPeer;
  search: SearchPeer;
  log: Logger;
  peers: PeerChecks;
  metrics: GatewayMetrics;
}

interface RouteCall extends RouteDeps {
  req: Request;
  res: Response;
}

/** A call whose scope depends on its input: the handler checks it once the input is read. */
export interface InputScopedCall extends RouteCall {
  identityFor(scope: Scope): CallerIdentity;
}

/** Authenticated; the credential must hold `scope`, checked before the handler runs. */
interface ScopedRoute extends RouteContract {
  scope: Scope;
  handle(call: RouteCall & { identity: CallerIdentity }): unknown;
}

/** Authenticated; the handler checks the scope, which `scope.byInput` states in words for the document. */
interface InputScopedRoute extends RouteContract {
  scope: { byInput: string };
  handle(call: InputScopedCall): unknown;
}

/** No credential needed. */
interface PublicRoute extends RouteContract {
  scope?: undefined;
  handle(call: RouteCall): unknown;
}

export type RestRoute = ScopedRoute | InputScopedRoute | PublicRoute;

/**
 * A router serving `routes` in their order: label (for logs and metrics), authentication (before
 * any body is read), the JSON body, the scope check, then the handler.
 */
export function mountRoutes(routes: readonly RestRoute[], deps: RouteDeps, auth?: RequestHandler): Router {
  const router = Router();
  for (const route of routes) {
    const steps: RequestHandler[] = [routeLabel(`${route.method.toUpperCase()} ${route.path}`)];
    if (route.scope !== undefined) {
      if (auth === undefined) throw new Error(`${route.path} needs authentication, and none was given`);
      steps.push(auth);
    }
    if (route.body) steps.push(...(route.body.optional ? optionalJsonBody() : jsonBody()));
    router[route.method](route.path, ...steps, (req, res) => handle(route, { ...deps, req, res }));
  }
  return router;
}

function handle(route: RestRoute, call: RouteCall): unknown {
  if (route.scope === undefined) return route.handle(call);
  if (typeof route.scope === "string") return route.handle({ ...call, identity: identityFor(call.res, route.scope) });
  return route.handle({ ...call, identityFor: (scope) => identityFor(call.res, scope) });
}

/** A JSON body when one is sent (same rules and limits as every JSON route); none at all is fine. */
function optionalJsonBody(): RequestHandler[] {
  const [requireJson, parse] = jsonBody() as [RequestHandler, RequestHandler];
  const hasBody = (req: Request) => req.headers["transfer-encoding"] !== undefined || (req.headers["content-length"] ?? "0") !== "0";
  return [(req, res, next) => (hasBody(req) ? requireJson(req, res, next) : next()), (req, res, next) => (hasBody(req) ? parse(req, res, next) : next())];
}
