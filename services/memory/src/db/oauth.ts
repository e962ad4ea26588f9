import type { Queryable } from "@3ngram/db";

/** Every OAuth statement of the memory service. Hashes are sha256 hex; nothing here sees a clear secret. */

export interface OAuthClientRow {
  clientId: string;
  registration: "dynamic" | "metadata_document";
  tokenEndpointAuthMethod: string;
  clientSecretHash: string | null;
  metadata: Record<string, unknown>;
  createdAt: Date;
}

const CLIENT_COLUMNS = `client_id AS "clientId", registration, token_endpoint_auth_method AS "tokenEndpointAuthMethod",
  client_secret_hash AS "clientSecretHash", metadata, created_at AS "createdAt"`;

export async function insertClient(
  db: Queryable,
  client: { clientId: string; tokenEndpointAuthMethod: string; clientSecretHash: string | null; metadata: object },
): Promise<OAuthClientRow> {
  const { rows } = await db.query<OAuthClientRow>(
    `INSERT INTO oauth_clients (client_id, registration, token_endpoint_auth_method, client_secret_hash, metadata)
     VALUES ($1, 'dynamic', $2, $3, $4) RETURNING ${CLIENT_COLUMNS}`,
    [client.clientId, client.tokenEndpointAuthMethod, client.clientSecretHash, JSON.stringify(client.metadata)],
  );
  return rows[0]!;
}

/** Records (or refreshes) the row a metadata-document client needs for its codes and tokens. */
export async function upsertMetadataDocumentClient(db: Queryable, clientId: string, metadata: object): Promise<OAuthClientRow | null> {
  const { rows } = await db.query<OAuthClientRow>(
    `INSERT INTO oauth_clients (client_id, registration, token_endpoint_auth_method, metadata)
     VALUES ($1, 'metadata_document', 'none', $2)
     ON CONFLICT (client_id) DO UPDATE SET metadata = EXCLUDED.metadata
       WHERE oauth_clients.registration = 'metadata_document'
     RETURNING ${CLIENT_COLUMNS}`,
    [clientId, JSON.stringify(metadata)],
  );
  return rows[0] ?? null;
}

export async function selectClient(db: Queryable, clientId: string): Promise<OAuthClientRow | null> {
  const { rows } = await db.query<OAuthClientRow>(`SELECT ${CLIENT_COLUMNS} FROM oauth_clients WHERE client_id = $1`, [clientId]);
  return rows[0] ?? null;
}

export async function touchClient(db: Queryable, clientId: string): Promise<void> {
  await db.query("UPDATE oauth_clients SET last_used_at = now() WHERE client_id = $1", [clientId]);
}

export async function insertAuthorizationCode(
  db: Queryable,
  code: {
    codeHash: string;
    tenantId: string;
    userId: string;
    clientId: string;
    redirectUri: string;
    codeChallenge: string;
    scopes: string[];
    resource: string;
    familyId: string;
    ttlSeconds: number;
  },
): Promise<Date> {
  const { rows } = await db.query<{ expiresAt: Date }>(
    `INSERT INTO oauth_authorization_codes
       (code_hash, tenant_id, user_id, client_id, redirect_uri, code_challenge, scopes, resource, family_id, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now() + make_interval(secs => $10))
     RETURNING expires_at AS "expiresAt"`,
    [
      code.codeHash,
      code.tenantId,
      code.userId,
      code.clientId,
      code.redirectUri,
      code.codeChallenge,
      code.scopes,
      code.resource,
      code.familyId,
      code.ttlSeconds,
    ],
  );
  return rows[0]!.expiresAt;
}

export interface ConsumedCode {
  outcome: "redeemed" | "expired" | "replayed" | "unknown";
  tenantId: string | null;
  userId: string | null;
  clientId: string | null;
  redirectUri: string | null;
  codeChallenge: string | null;
  scopes: string[] | null;
  resource: string | null;
  familyId: string | null;
}

/** The single-use redemption (SECURITY DEFINER; a replay revokes the grant the code started). */
export async function consumeAuthorizationCode(db: Queryable, codeHash: string): Promise<ConsumedCode> {
  const { rows } = await db.query<ConsumedCode>(
    `SELECT outcome, tenant_id AS "tenantId", user_id AS "userId", client_id AS "clientId", redirect_uri AS "redirectUri",
            code_challenge AS "codeChallenge", scopes, resource, family_id AS "familyId"
     FROM consume_oauth_code($1)`,
    [codeHash],
  );
  return rows[0]!;
}

export async function insertRefreshToken(
  db: Queryable,
  token: { tokenHash: string; tenantId: string; userId: string; clientId: string; familyId: string; scopes: string[]; resource: string; ttlSeconds: number },
): Promise<void> {
  await db.query(
    `INSERT INTO oauth_refresh_tokens (token_hash, tenant_id, user_id, client_id, family_id, scopes, resource, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8))`,
    [token.tokenHash, token.tenantId, token.userId, token.clientId, token.familyId, token.scopes, token.resource, token.ttlSeconds],
  );
}

export interface RotatedToken {
  outcome: "rotated" | "replayed" | "expired" | "invalid_scope" | "unknown";
  tenantId: string | null;
  userId: string | null;
  scopes: string[] | null;
  resource: string | null;
}

export async function rotateRefreshToken(
  db: Queryable,
  rotation: { tokenHash: string; clientId: string; newHash: string; ttlSeconds: number; scopes: string[] | null },
): Promise<RotatedToken> {
  const { rows } = await db.query<RotatedToken>(
    `SELECT outcome, tenant_id AS "tenantId", user_id AS "userId", scopes, resource
     FROM rotate_oauth_refresh_token($1, $2, $3, now() + make_interval(secs => $4), $5::text[])`,
    [rotation.tokenHash, rotation.clientId, rotation.newHash, rotation.ttlSeconds, rotation.scopes],
  );
  return rows[0]!;
}

export async function revokeRefreshToken(db: Queryable, tokenHash: string, clientId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>("SELECT revoke_oauth_refresh_token($1, $2) AS n", [tokenHash, clientId]);
  return rows[0]?.n ?? 0;
}

export interface SigningKeyRow {
  kid: string;
  alg: string;
  privateJwk: Record<string, unknown>;
  publicJwk: Record<string, unknown>;
  active: boolean;
}

/** Adds a signing key unless one is already active (the partial unique index arbitrates races). */
export async function insertSigningKeyIfNone(db: Queryable, key: { kid: string; privateJwk: object; publicJwk: object }): Promise<void> {
  await db.query(
    `INSERT INTO oauth_signing_keys (kid, alg, private_jwk, public_jwk)
     SELECT $1, 'EdDSA', $2, $3 WHERE NOT EXISTS (SELECT 1 FROM oauth_signing_keys WHERE retired_at IS NULL)
     ON CONFLICT DO NOTHING`,
    [key.kid, JSON.stringify(key.privateJwk), JSON.stringify(key.publicJwk)],
  );
}

/** The active key and the retired keys still inside their verification window, active first. */
export async function selectSigningKeys(db: Queryable, retentionSeconds: number): Promise<SigningKeyRow[]> {
  const { rows } = await db.query<SigningKeyRow>(
    `SELECT kid, alg, private_jwk AS "privateJwk", public_jwk AS "publicJwk", retired_at IS NULL AS active
     FROM oauth_signing_keys
     WHERE retired_at IS NULL OR retired_at > now() - make_interval(secs => $1)
     ORDER BY retired_at IS NULL DESC, created_at DESC`,
    [retentionSeconds],
  );
  return rows;
}

/** Operator rotation: the active key retires; the next key request creates its successor. */
export async function retireActiveSigningKey(db: Queryable): Promise<number> {
  const { rowCount } = await db.query("UPDATE oauth_signing_keys SET retired_at = now() WHERE retired_at IS NULL");
  return rowCount ?? 0;
}

export interface GarbageCounts {
  clients: string;
  codes: string;
  tokens: string;
  keys: string;
}

export async function collectOAuthGarbage(db: Queryable, clientIdleDays: number, keyRetentionSeconds: number): Promise<GarbageCounts> {
  const { rows } = await db.query<GarbageCounts>(
    "SELECT clients, codes, tokens, keys FROM collect_oauth_garbage(make_interval(days => $1), make_interval(secs => $2))",
    [clientIdleDays, keyRetentionSeconds],
  );
  return rows[0]!;
}
