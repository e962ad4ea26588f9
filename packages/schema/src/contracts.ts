/**
 * Each RPC's public shapes: the request its caller sends (the service validates it, at its trust
 * boundary) and the response it answers. The proto messages are designed so their JSON mapping is
 * exactly these shapes, so the gRPC bridge (@3ngram/rpc bridge.ts) converts every RPC with one
 * generic function per direction (docs/adr/0029-one-bridge-between-proto-and-public-shapes.md).
 * The round-trip test walks every method of each service and fails on one missing here.
 */
import { z } from "zod";
import { getFactsInputSchema, getFactsOutputSchema } from "./facts.js";
import { apiKeyRecordSchema } from "./api-keys.js";
import { exportInputSchema, importOutputSchema, importQuerySchema } from "./archive.js";
import { eraseInputSchema, eraseOutputSchema } from "./erasure.js";
import { facetsOutputSchema, historyOutputSchema, listMemoriesInputSchema, listMemoriesOutputSchema } from "./listing.js";
import {
  archiveOutputSchema,
  memoryTypeSchema,
  getMemoriesInputSchema,
  getMemoriesOutputSchema,
  instantSchema,
  memoryIdSchema,
  rememberInputSchema,
  rememberOutputSchema,
  resolveInputSchema,
  resolveOutputSchema,
  reviseInputSchema,
  reviseOutputSchema,
} from "./memory.js";
import { outputObject } from "./open-object.js";
import {
  briefingInputSchema,
  briefingOutputSchema,
  describeEnvironmentInputSchema,
  environmentReportSchema,
  handoffInputSchema,
  handoffOutputSchema,
} from "./orientation.js";
import {
  acceptProposalInputSchema,
  createEdgeProposalsInputSchema,
  createFactProposalsInputSchema,
  edgeProposalRecordSchema,
  factProposalRecordSchema,
  listProposalsFields,
  rejectProposalInputSchema,
} from "./proposals.js";
import { retrievalPolicySchema, scopeActionFields, scopeRecordSchema, setRetrievalDefaultInputSchema } from "./scopes.js";
import { searchInputSchema, searchOutputSchema } from "./search.js";
import { memoryResourceSchema } from "./surface.js";

/** Pages of the consolidator's maintenance reads and sweeps: default and most per call. */
const DEFAULT_TENANT_PAGE = 1000;
const MAX_TENANT_PAGE = 5000;
const DEFAULT_PENDING_EMBEDDINGS_PAGE = 100;
const MAX_PENDING_EMBEDDINGS_PAGE = 1000;
const DEFAULT_EXPIRY_BATCH = 500;
const MAX_EXPIRY_BATCH = 1000;

const page = (fallback: number, max: number) => z.int().min(1).max(max).default(fallback);
const embeddingModelSchema = z.string().regex(/^[\w.:/-]{1,128}$/, { message: "must be a model id" });

/** OAuth storage (internal:auth): client metadata and JWKs travel as JSON text the service validates. */
const oauthClient = outputObject({
  clientId: z.string(),
  registration: z.enum(["dynamic", "metadata_document"]),
  tokenEndpointAuthMethod: z.string(),
  metadataJson: z.string(),
  createdAt: z.string(),
});
const oauthGrant = outputObject({
  tenantId: z.string(),
  userId: z.string(),
  clientId: z.string(),
  scopes: z.array(z.string()),
  resource: z.string(),
  refreshToken: z.string().optional(),
});
const clientCredentials = { clientId: z.string(), clientSecret: z.string().optional() };

/** A request naming one memory. */
const memoryIdRequestSchema = z.strictObject({ memoryId: memoryIdSchema });

const empty = z.strictObject({});
const oneScope = outputObject({ scope: scopeRecordSchema });

/** What a proposal hand-over stored: new ids, and how many were already proposed, decided or linked. */
const createdProposals = outputObject({ createdIds: z.array(z.string()), skipped: z.int().min(0) });
/** One proposal of either kind: exactly one of the two is present. */
const oneProposal = outputObject({ edge: edgeProposalRecordSchema.optional(), fact: factProposalRecordSchema.optional() });
const proposalIdRequest = acceptProposalInputSchema.omit({ action: true });

/** MemoriesService, by protobuf-es method name. */
const memoriesContract = {
  remember: { request: rememberInputSchema, response: rememberOutputSchema },
  getMemories: { request: getMemoriesInputSchema, response: getMemoriesOutputSchema },
  revise: { request: reviseInputSchema, response: reviseOutputSchema },
  resolve: { request: resolveInputSchema, response: resolveOutputSchema },
  archive: { request: memoryIdRequestSchema, response: archiveOutputSchema },
  getHistory: { request: memoryIdRequestSchema, response: historyOutputSchema },
  getFacts: { request: getFactsInputSchema, response: getFactsOutputSchema },
  readMemory: { request: z.strictObject({ id: memoryIdSchema }), response: memoryResourceSchema },
  listMemories: { request: listMemoriesInputSchema, response: listMemoriesOutputSchema },
  getFacets: { request: empty, response: facetsOutputSchema },
} as const;

/** ScopesService, by protobuf-es method name. */
const scopesContract = {
  listScopes: { request: empty, response: outputObject({ scopes: z.array(scopeRecordSchema), count: z.int().min(0), policy: retrievalPolicySchema }) },
  createScope: { request: z.strictObject(scopeActionFields.create), response: oneScope },
  renameScope: { request: z.strictObject(scopeActionFields.rename), response: oneScope },
  setScopeAliases: { request: z.strictObject(scopeActionFields.set_aliases), response: oneScope },
  setScopeMappings: { request: z.strictObject(scopeActionFields.set_mappings), response: oneScope },
  deleteScope: { request: z.strictObject(scopeActionFields.delete), response: outputObject({ name: z.string(), policy: retrievalPolicySchema }) },
  setRetrievalDefault: { request: setRetrievalDefaultInputSchema, response: outputObject({ policy: retrievalPolicySchema }) },
} as const;

/** OrientationService, by protobuf-es method name. */
const orientationContract = {
  briefing: { request: briefingInputSchema, response: briefingOutputSchema },
  handoff: { request: handoffInputSchema, response: handoffOutputSchema },
  describeEnvironment: { request: describeEnvironmentInputSchema, response: environmentReportSchema },
} as const;

/** ProposalsService, by protobuf-es method name. */
const proposalsContract = {
  createConsolidationProposals: { request: createEdgeProposalsInputSchema, response: createdProposals },
  createFactProposals: { request: createFactProposalsInputSchema, response: createdProposals },
  listProposals: {
    request: z.strictObject(listProposalsFields),
    // factProposals only when there are some (review_proposals' output promises that).
    response: outputObject({
      proposals: z.array(edgeProposalRecordSchema),
      count: z.int().min(0),
      factProposals: z.array(factProposalRecordSchema).min(1).optional(),
    }),
  },
  getProposal: { request: proposalIdRequest, response: oneProposal },
  acceptProposal: { request: proposalIdRequest, response: oneProposal },
  rejectProposal: { request: rejectProposalInputSchema.omit({ action: true }), response: oneProposal },
} as const;

/** MaintenanceService, by protobuf-es method name. */
const maintenanceContract = {
  listTenants: {
    request: z.strictObject({ after: z.uuid().optional(), limit: page(DEFAULT_TENANT_PAGE, MAX_TENANT_PAGE) }),
    response: outputObject({ tenantIds: z.array(z.string()) }),
  },
  listPendingEmbeddings: {
    request: z.strictObject({
      model: embeddingModelSchema,
      after: memoryIdSchema.optional(),
      limit: page(DEFAULT_PENDING_EMBEDDINGS_PAGE, MAX_PENDING_EMBEDDINGS_PAGE),
    }),
    response: outputObject({ memoryIds: z.array(z.string()) }),
  },
  expireCommitments: {
    request: z.strictObject({ dueBefore: instantSchema, limit: page(DEFAULT_EXPIRY_BATCH, MAX_EXPIRY_BATCH) }),
    response: outputObject({ memoryIds: z.array(z.string()), skipped: z.int().min(0) }),
  },
  storeEmbedding: {
    request: z.strictObject({ memoryId: memoryIdSchema, model: embeddingModelSchema, vector: z.array(z.number()) }),
    response: outputObject({ stored: z.boolean() }),
  },
} as const;

/** ApiKeysService, by protobuf-es method name. */
const apiKeysContract = {
  listMyApiKeys: { request: empty, response: outputObject({ keys: z.array(apiKeyRecordSchema) }) },
  // The service's key rules judge the name and the scopes (against the caller's own).
  createMyApiKey: {
    request: z.strictObject({ name: z.string(), scopes: z.array(z.string()) }),
    response: outputObject({ key: apiKeyRecordSchema, apiKey: z.string() }),
  },
  // A malformed key id is answered like an unknown one (not_found), so any string is let through here.
  revokeMyApiKey: { request: z.strictObject({ keyId: z.string() }), response: outputObject({ key: apiKeyRecordSchema }) },
  resolveApiKey: {
    request: z.strictObject({ apiKey: z.string() }),
    response: outputObject({ tenantId: z.string(), userId: z.string(), scopes: z.array(z.string()), keyId: z.string() }),
  },
  // The tenant is the credential's; only a user id can name a user.
  checkTenantMembership: {
    request: z.strictObject({ userId: z.uuid({ message: "must be a user id (UUID)" }) }),
    response: outputObject({ member: z.boolean() }),
  },
} as const;

/** OAuthStorageService, by protobuf-es method name. */
const oauthContract = {
  registerOAuthClient: {
    request: z.strictObject({ metadataJson: z.string() }),
    response: outputObject({ client: oauthClient, clientSecret: z.string().optional() }),
  },
  saveMetadataDocumentClient: { request: z.strictObject({ clientId: z.string(), metadataJson: z.string() }), response: outputObject({ client: oauthClient }) },
  getOAuthClient: { request: z.strictObject({ clientId: z.string() }), response: outputObject({ client: oauthClient }) },
  createAuthorizationCode: {
    request: z.strictObject({ clientId: z.string(), redirectUri: z.string(), codeChallenge: z.string(), scopes: z.array(z.string()), resource: z.string() }),
    response: outputObject({ code: z.string(), expiresAt: z.string() }),
  },
  redeemAuthorizationCode: {
    request: z.strictObject({ code: z.string(), ...clientCredentials, redirectUri: z.string(), codeVerifier: z.string() }),
    response: outputObject({ grant: oauthGrant }),
  },
  // An empty scopes list keeps the grant's scopes.
  refreshOAuthGrant: {
    request: z.strictObject({ refreshToken: z.string(), ...clientCredentials, scopes: z.array(z.string()) }),
    response: outputObject({ grant: oauthGrant }),
  },
  revokeOAuthToken: { request: z.strictObject({ token: z.string(), ...clientCredentials }), response: outputObject({}) },
  getSigningKeys: {
    request: empty,
    response: outputObject({
      keys: z.array(outputObject({ kid: z.string(), alg: z.string(), publicJwkJson: z.string(), privateJwkJson: z.string().optional(), active: z.boolean() })),
    }),
  },
  collectOAuthGarbage: {
    request: z.strictObject({ clientIdleDays: z.int().min(1).optional() }),
    response: outputObject({ clientsRemoved: z.int().min(0), codesRemoved: z.int().min(0), tokensRemoved: z.int().min(0), keysRemoved: z.int().min(0) }),
  },
} as const;

/**
 * One message of an import stream (ArchiveService.Import): the options in the first, a piece of
 * the NDJSON file in each later one, `end` in the last. The proto's oneof keeps them apart; which
 * comes when is the import's rule (services/memory/src/domain/import.ts).
 */
const importPartSchema = z.strictObject({
  options: importQuerySchema.optional(),
  ndjson: z.string().optional(),
  // The last message: the file is complete (only `true` means anything, so only `true` is accepted).
  end: z.literal(true).optional(),
});
export type ImportPart = z.infer<typeof importPartSchema>;

/** One message of an export stream: an archive record (an NDJSON line as an object), now and then a resume cursor. */
const exportedRecordSchema = outputObject({ record: z.record(z.string(), z.unknown()), cursor: z.string().optional() });

/** ArchiveService, by protobuf-es method name; a streaming RPC's shapes are those of one message. */
const archiveContract = {
  import: { request: importPartSchema, response: importOutputSchema },
  export: { request: exportInputSchema, response: exportedRecordSchema },
  erase: { request: eraseInputSchema, response: eraseOutputSchema },
} as const;

/** A contract per memory service, by the names of @3ngram/proto's memoryServices (docs/adr/0033). */
export const memoryContracts = {
  memories: memoriesContract,
  scopes: scopesContract,
  orientation: orientationContract,
  proposals: proposalsContract,
  maintenance: maintenanceContract,
  apiKeys: apiKeysContract,
  oauth: oauthContract,
  archive: archiveContract,
} as const;

/** The consolidator's similar-pair scan (internal:consolidate). limit's ceiling is the scan policy's, checked by the search service. */
const similarPairsRequestSchema = z.strictObject({ limit: z.int().min(1).optional() });
const similarPairsResponseSchema = outputObject({
  pairs: z.array(
    outputObject({
      newerId: z.string(),
      olderId: z.string(),
      newerType: memoryTypeSchema,
      olderType: memoryTypeSchema,
      similarity: z.number(),
      band: z.enum(["near_duplicate", "related"]),
      threshold: z.number(),
    }),
  ),
  scanned: z.int().min(0),
  /** Absent when no embedder is configured (then there are no pairs). */
  model: z.string().optional(),
});

/** SearchService, by protobuf-es method name. */
export const searchContract = {
  search: { request: searchInputSchema, response: searchOutputSchema },
  similarPairs: { request: similarPairsRequestSchema, response: similarPairsResponseSchema },
} as const;

/** The search server's services by the names of @3ngram/proto's searchServices. */
export const searchContracts = { search: searchContract } as const;
