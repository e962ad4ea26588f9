/**
 * /api/v1/scopes: the scope registry, with the same schema and service calls as configure_scope.
 * GET lists it (with the retrieval default); POST takes any configure_scope action as its body.
 */
import { SCOPES } from "@3ngram/rpc";
import { configureScopeInputSchema, configureScopeOutputSchema, parseInput } from "@3ngram/schema";
import { actionAccess } from "../clients/action-tools.js";
import { configureScope } from "../clients/scopes.js";
import type { InputScopedCall, RestRoute } from "./route.js";

export const SCOPE_ROUTES: readonly RestRoute[] = [
  {
    method: "get",
    path: "/api/v1/scopes",
    summary: "the scope registry and retrieval default",
    tag: "scopes",
    scope: SCOPES.read,
    answers: { 200: { description: "the registry", json: configureScopeOutputSchema } },
    handle: async ({ res, memory, identity }) => res.json(await configureScope({ action: "list" }, { memory, identity })),
  },
  {
    method: "post",
    path: "/api/v1/scopes",
    summary: "configure_scope: any action (list reads, the rest write)",
    tag: "scopes",
    scope: { byInput: `${SCOPES.read} for list, else ${SCOPES.write}` },
    body: { schema: configureScopeInputSchema },
    answers: { 200: { description: "done", json: configureScopeOutputSchema }, 201: { description: "created", json: configureScopeOutputSchema } },
    errors: [404, 409],
    // The body is read first: which scope the call needs depends on its action.
    handle: async ({ req, res, memory, identityFor }: InputScopedCall) => {
      const input = parseInput(configureScopeInputSchema, req.body);
      const output = await configureScope(input, { memory, identity: identityFor(actionAccess(input)) });
      res.status(input.action === "create" ? 201 : 200).json(output);
    },
  },
];
