-- 0005: OAuth 2.1 storage. Clients and signing keys are global (no tenant); authorization codes
-- and refresh tokens belong to a tenant and are policed like api_keys: RLS on, not FORCEd, with
-- the pre-tenant operations (redeem a code, rotate a refresh token) in narrow SECURITY DEFINER
-- functions. Secrets, codes and tokens are stored only as sha256 hex.

CREATE TABLE oauth_clients (
  -- A UUID for dynamically registered clients; the https URL for metadata-document clients.
  client_id text PRIMARY KEY CHECK (char_length(client_id) BETWEEN 1 AND 2048),
  registration text NOT NULL CHECK (registration IN ('dynamic', 'metadata_document')),
  token_endpoint_auth_method text NOT NULL
    CHECK (token_endpoint_auth_method IN ('none', 'client_secret_basic', 'client_secret_post')),
  client_secret_hash text,
  -- The validated RFC 7591 metadata (redirect_uris, client_name, …); never a secret.
  metadata jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- Touched when the client is issued tokens; the GC job removes clients idle too long.
  last_used_at timestamptz,
  CHECK ((client_secret_hash IS NULL) = (token_endpoint_auth_method = 'none')),
  CHECK (registration = 'dynamic' OR token_endpoint_auth_method = 'none')
);
CREATE INDEX oauth_clients_idle_idx ON oauth_clients (coalesce(last_used_at, created_at));

CREATE TABLE oauth_authorization_codes (
  code_hash text PRIMARY KEY,
  tenant_id uuid NOT NULL,
  user_id uuid NOT NULL,
  client_id text NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
  redirect_uri text NOT NULL,
  -- PKCE S256 only: base64url(sha256(verifier)), 43 characters.
  code_challenge text NOT NULL CHECK (code_challenge ~ '^[A-Za-z0-9_-]{43}$'),
  scopes text[] NOT NULL CHECK (scopes <@ ARRAY['memory:read', 'memory:write']::text[] AND cardinality(scopes) > 0),
  resource text NOT NULL,
  -- The refresh-token family this code starts; revoked if the code is ever presented again.
  family_id uuid NOT NULL UNIQUE,
  expires_at timestamptz NOT NULL,
  consumed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id)
);
CREATE INDEX oauth_codes_expiry_idx ON oauth_authorization_codes (expires_at);

CREATE TABLE oauth_refresh_tokens (
  token_hash text PRIMARY KEY,
  tenant_id uuid NOT NULL,
  user_id uuid NOT NULL,
  client_id text NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
  family_id uuid NOT NULL,
  scopes text[] NOT NULL CHECK (scopes <@ ARRAY['memory:read', 'memory:write']::text[] AND cardinality(scopes) > 0),
  resource text NOT NULL,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- Set when this token was exchanged for its successor; presenting it again revokes the family.
  rotated_at timestamptz,
  revoked_at timestamptz,
  FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id)
);
CREATE INDEX oauth_refresh_family_idx ON oauth_refresh_tokens (family_id);
CREATE INDEX oauth_refresh_expiry_idx ON oauth_refresh_tokens (expires_at);

CREATE TABLE oauth_signing_keys (
  kid text PRIMARY KEY,
  alg text NOT NULL CHECK (alg = 'EdDSA'),
  private_jwk jsonb NOT NULL,
  public_jwk jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- A retired key signs nothing new but keeps verifying (and stays in the JWKS) for a while.
  retired_at timestamptz
);
-- At most one key signs at a time, so every gateway replica picks the same one.
CREATE UNIQUE INDEX oauth_signing_keys_one_active ON oauth_signing_keys ((true)) WHERE retired_at IS NULL;

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['oauth_authorization_codes', 'oauth_refresh_tokens'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format($p$CREATE POLICY tenant_isolation ON %I
      USING (tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid)
      WITH CHECK (tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid)$p$, t);
  END LOOP;
END $$;

-- Redeems a code exactly once: the conditional UPDATE lets one of any number of concurrent
-- callers win. A second presentation of a consumed code revokes every refresh token the first
-- one started (OAuth 2.1 §4.1.3) and reports `replayed`; the caller refuses either way.
CREATE FUNCTION consume_oauth_code(p_code_hash text)
RETURNS TABLE (outcome text, tenant_id uuid, user_id uuid, client_id text, redirect_uri text,
               code_challenge text, scopes text[], resource text, family_id uuid)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$
#variable_conflict use_column
DECLARE c public.oauth_authorization_codes%ROWTYPE;
BEGIN
  UPDATE public.oauth_authorization_codes AS a SET consumed_at = now()
  WHERE a.code_hash = p_code_hash AND a.consumed_at IS NULL
  RETURNING a.* INTO c;
  IF FOUND THEN
    IF c.expires_at <= now() THEN
      RETURN QUERY SELECT 'expired'::text, NULL::uuid, NULL::uuid, NULL::text, NULL::text, NULL::text, NULL::text[], NULL::text, NULL::uuid;
      RETURN;
    END IF;
    RETURN QUERY SELECT 'redeemed'::text, c.tenant_id, c.user_id, c.client_id, c.redirect_uri, c.code_challenge, c.scopes, c.resource, c.family_id;
    RETURN;
  END IF;
  SELECT a.* INTO c FROM public.oauth_authorization_codes a WHERE a.code_hash = p_code_hash;
  IF FOUND THEN
    UPDATE public.oauth_refresh_tokens r SET revoked_at = now() WHERE r.family_id = c.family_id AND r.revoked_at IS NULL;
    RETURN QUERY SELECT 'replayed'::text, NULL::uuid, NULL::uuid, NULL::text, NULL::text, NULL::text, NULL::text[], NULL::text, NULL::uuid;
    RETURN;
  END IF;
  RETURN QUERY SELECT 'unknown'::text, NULL::uuid, NULL::uuid, NULL::text, NULL::text, NULL::text, NULL::text[], NULL::text, NULL::uuid;
END $$;
REVOKE ALL ON FUNCTION consume_oauth_code(text) FROM PUBLIC;

-- Exchanges a live refresh token for its successor in the same family, once. Presenting a token
-- that was already rotated (or revoked) revokes the whole family: either the client or a thief
-- holds a stale copy, and the server cannot tell which. A narrower scope set may be asked for.
CREATE FUNCTION rotate_oauth_refresh_token(p_token_hash text, p_client_id text, p_new_hash text,
                                           p_expires_at timestamptz, p_scopes text[])
RETURNS TABLE (outcome text, tenant_id uuid, user_id uuid, scopes text[], resource text)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$
#variable_conflict use_column
DECLARE t public.oauth_refresh_tokens%ROWTYPE;
  granted text[];
BEGIN
  SELECT r.* INTO t FROM public.oauth_refresh_tokens r WHERE r.token_hash = p_token_hash FOR UPDATE;
  IF NOT FOUND OR t.client_id <> p_client_id THEN
    RETURN QUERY SELECT 'unknown'::text, NULL::uuid, NULL::uuid, NULL::text[], NULL::text;
    RETURN;
  END IF;
  IF t.rotated_at IS NOT NULL OR t.revoked_at IS NOT NULL THEN
    UPDATE public.oauth_refresh_tokens r SET revoked_at = now() WHERE r.family_id = t.family_id AND r.revoked_at IS NULL;
    RETURN QUERY SELECT 'replayed'::text, NULL::uuid, NULL::uuid, NULL::text[], NULL::text;
    RETURN;
  END IF;
  IF t.expires_at <= now() THEN
    RETURN QUERY SELECT 'expired'::text, NULL::uuid, NULL::uuid, NULL::text[], NULL::text;
    RETURN;
  END IF;
  granted := coalesce(p_scopes, t.scopes);
  IF cardinality(granted) = 0 OR NOT granted <@ t.scopes THEN
    RETURN QUERY SELECT 'invalid_scope'::text, NULL::uuid, NULL::uuid, NULL::text[], NULL::text;
    RETURN;
  END IF;
  UPDATE public.oauth_refresh_tokens r SET rotated_at = now() WHERE r.token_hash = p_token_hash;
  INSERT INTO public.oauth_refresh_tokens (token_hash, tenant_id, user_id, client_id, family_id, scopes, resource, expires_at)
  VALUES (p_new_hash, t.tenant_id, t.user_id, t.client_id, t.family_id, granted, t.resource, p_expires_at);
  UPDATE public.oauth_clients c SET last_used_at = now() WHERE c.client_id = t.client_id;
  RETURN QUERY SELECT 'rotated'::text, t.tenant_id, t.user_id, granted, t.resource;
END $$;
REVOKE ALL ON FUNCTION rotate_oauth_refresh_token(text, text, text, timestamptz, text[]) FROM PUBLIC;

-- RFC 7009: revoking a refresh token revokes its family. Unknown tokens and other clients'
-- tokens are ignored (the endpoint answers 200 regardless, so nothing can be probed).
CREATE FUNCTION revoke_oauth_refresh_token(p_token_hash text, p_client_id text)
RETURNS integer
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$
  WITH target AS (
    SELECT r.family_id FROM public.oauth_refresh_tokens r WHERE r.token_hash = p_token_hash AND r.client_id = p_client_id
  ), revoked AS (
    UPDATE public.oauth_refresh_tokens r SET revoked_at = now()
    FROM target WHERE r.family_id = target.family_id AND r.revoked_at IS NULL
    RETURNING 1
  )
  SELECT count(*)::integer FROM revoked
$$;
REVOKE ALL ON FUNCTION revoke_oauth_refresh_token(text, text) FROM PUBLIC;

-- The consolidator's GC: expired codes and refresh tokens (past expiry by a day, so a replay
-- shortly after expiry is still recognised), clients idle for p_client_idle, and signing keys
-- retired longer ago than any token they signed can live. Cross-tenant by nature, so it runs as
-- the owner inside this function; the runtime role gets no DELETE on any table.
CREATE FUNCTION collect_oauth_garbage(p_client_idle interval, p_key_retention interval)
RETURNS TABLE (clients bigint, codes bigint, tokens bigint, keys bigint)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$
#variable_conflict use_column
DECLARE n_codes bigint; n_tokens bigint; n_clients bigint; n_keys bigint;
BEGIN
  DELETE FROM public.oauth_authorization_codes a WHERE a.expires_at < now() - interval '1 day';
  GET DIAGNOSTICS n_codes = ROW_COUNT;
  DELETE FROM public.oauth_refresh_tokens r WHERE r.expires_at < now() - interval '1 day';
  GET DIAGNOSTICS n_tokens = ROW_COUNT;
  -- A client is idle when neither it nor any live refresh token of it was used recently.
  DELETE FROM public.oauth_clients c
  WHERE coalesce(c.last_used_at, c.created_at) < now() - p_client_idle
    AND NOT EXISTS (SELECT 1 FROM public.oauth_refresh_tokens r
                    WHERE r.client_id = c.client_id AND r.revoked_at IS NULL AND r.rotated_at IS NULL AND r.expires_at > now());
  GET DIAGNOSTICS n_clients = ROW_COUNT;
  DELETE FROM public.oauth_signing_keys k WHERE k.retired_at IS NOT NULL AND k.retired_at < now() - p_key_retention;
  GET DIAGNOSTICS n_keys = ROW_COUNT;
  RETURN QUERY SELECT n_clients, n_codes, n_tokens, n_keys;
END $$;
REVOKE ALL ON FUNCTION collect_oauth_garbage(interval, interval) FROM PUBLIC;

-- Grants: clients and keys are global and written by the runtime role directly; codes and
-- tokens are inserted inside the tenant's RLS context; nothing is deleted except by the GC function.
GRANT SELECT, INSERT ON oauth_clients TO threengram_app;
GRANT UPDATE (last_used_at, metadata) ON oauth_clients TO threengram_app;
GRANT SELECT, INSERT ON oauth_signing_keys TO threengram_app;
GRANT UPDATE (retired_at) ON oauth_signing_keys TO threengram_app;
GRANT SELECT, INSERT ON oauth_authorization_codes, oauth_refresh_tokens TO threengram_app;
GRANT EXECUTE ON FUNCTION consume_oauth_code(text) TO threengram_app;
GRANT EXECUTE ON FUNCTION rotate_oauth_refresh_token(text, text, text, timestamptz, text[]) TO threengram_app;
GRANT EXECUTE ON FUNCTION revoke_oauth_refresh_token(text, text) TO threengram_app;
GRANT EXECUTE ON FUNCTION collect_oauth_garbage(interval, interval) TO threengram_app;
