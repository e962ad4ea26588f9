-- 0001: tenants, users, API keys, memories and their events; roles, grants and row-level security.
-- Append-only: never edit a migration that has shipped; add the next number instead.

CREATE EXTENSION IF NOT EXISTS vector;

-- Roles are cluster-wide, so several databases (one per test run) may race to create them.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'threengram_app') THEN
    CREATE ROLE threengram_app NOLOGIN NOSUPERUSER NOBYPASSRLS;
  END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'threengram_search') THEN
    CREATE ROLE threengram_search NOLOGIN NOSUPERUSER NOBYPASSRLS;
  END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;

CREATE TABLE tenants (
  id uuid PRIMARY KEY,
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 256),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  display_name text NOT NULL CHECK (char_length(display_name) BETWEEN 1 AND 256),
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant_id, id)
);

CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL,
  user_id uuid NOT NULL,
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 256),
  -- Shown to the owner to tell keys apart; the secret part is never stored.
  prefix text NOT NULL,
  key_hash text NOT NULL UNIQUE,
  scopes text[] NOT NULL CHECK (scopes <@ ARRAY['memory:read', 'memory:write']::text[] AND cardinality(scopes) > 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz,
  last_used_at timestamptz,
  UNIQUE (tenant_id, id),
  FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id)
);
CREATE INDEX api_keys_tenant_idx ON api_keys (tenant_id, created_at DESC);

CREATE TABLE memories (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  memory_type text NOT NULL
    CHECK (memory_type IN ('decision', 'commitment', 'blocker', 'fact', 'preference', 'pattern', 'note', 'event')),
  topic text NOT NULL CHECK (char_length(topic) BETWEEN 1 AND 256),
  -- 2000 through the tools; imports may carry up to 262144.
  content text NOT NULL CHECK (char_length(content) BETWEEN 1 AND 262144),
  scope text NOT NULL DEFAULT 'personal' CHECK (scope ~ '^[a-z0-9][a-z0-9-]*$' AND char_length(scope) <= 64),
  project text CHECK (project IS NULL OR char_length(project) BETWEEN 1 AND 256),
  tags text[] NOT NULL DEFAULT '{}' CHECK (cardinality(tags) <= 32),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
  -- sha256 of the content: the live-duplicate guard.
  content_hash text NOT NULL,
  -- Untyped so the dimension can follow the configured model; indexes are per dimension (below).
  embedding vector,
  embedding_model text,
  embedding_dim integer,
  search_tsv tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, topic || ' ' || content)) STORED,
  -- Valid time: when the memory was true in the world.
  valid_from timestamptz NOT NULL DEFAULT now(),
  valid_to timestamptz,
  -- Transaction time: when we learned it, and when a later write closed it (the second clock).
  recorded_at timestamptz NOT NULL DEFAULT now(),
  closed_recorded_at timestamptz,
  created_by uuid,
  UNIQUE (tenant_id, id),
  CHECK (valid_to IS NULL OR valid_from <= valid_to),
  CHECK ((embedding IS NULL) = (embedding_model IS NULL) AND (embedding IS NULL) = (embedding_dim IS NULL)),
  CHECK (embedding IS NULL OR vector_dims(embedding) = embedding_dim)
);
CREATE UNIQUE INDEX memories_live_content_uq ON memories (tenant_id, content_hash) WHERE valid_to IS NULL;
CREATE INDEX memories_tenant_recorded_idx ON memories (tenant_id, recorded_at DESC, id);
CREATE INDEX memories_tenant_type_idx ON memories (tenant_id, memory_type);
CREATE INDEX memories_tenant_scope_idx ON memories (tenant_id, scope, status);
CREATE INDEX memories_tsv_idx ON memories USING gin (search_tsv);
CREATE INDEX memories_pending_embedding_idx ON memories (tenant_id, recorded_at) WHERE embedding IS NULL;
-- The bundled offline model's dimension. Other dimensions get their index at start-up.
CREATE INDEX memories_embedding_512_hnsw ON memories
  USING hnsw ((embedding::vector(512)) vector_cosine_ops) WHERE embedding_dim = 512;

CREATE TABLE memory_events (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL,
  memory_id uuid NOT NULL,
  event_kind text NOT NULL CHECK (event_kind IN
    ('create', 'revise', 'supersede', 'resolve', 'unresolve', 'archive', 'import', 'embed_failed', 'embed_done')),
  actor_kind text NOT NULL CHECK (actor_kind IN ('user_mcp', 'user_api', 'worker', 'importer', 'system')),
  -- Metadata only (lengths, states, ids): never memory content.
  payload jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (tenant_id, memory_id) REFERENCES memories (tenant_id, id)
);
CREATE INDEX memory_events_memory_idx ON memory_events (tenant_id, memory_id, created_at);

-- Row-level security keyed on the transaction-local app.tenant_id. NULLIF: a pooled connection
-- that never set it reads '' and must match nothing rather than fail on ''::uuid.
ALTER TABLE tenants ENABLE ROW LEVEL SECURITY;
ALTER TABLE tenants FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tenants
  USING (id = NULLIF(current_setting('app.tenant_id', true), '')::uuid)
  WITH CHECK (id = NULLIF(current_setting('app.tenant_id', true), '')::uuid);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['users', 'api_keys', 'memories', 'memory_events'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format($p$CREATE POLICY tenant_isolation ON %I
      USING (tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid)
      WITH CHECK (tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid)$p$, t);
  END LOOP;
END $$;
-- api_keys is not FORCEd: the pre-tenant key lookup runs through the SECURITY DEFINER function
-- below as the table owner. Everything holding memory data is forced, owner included.
ALTER TABLE users FORCE ROW LEVEL SECURITY;
ALTER TABLE memories FORCE ROW LEVEL SECURITY;
ALTER TABLE memory_events FORCE ROW LEVEL SECURITY;

-- The one pre-tenant read: an API key hash to its tenant. Narrow, with a pinned search_path.
CREATE FUNCTION resolve_api_key(p_key_hash text)
RETURNS TABLE (key_id uuid, tenant_id uuid, user_id uuid, scopes text[])
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$
  SELECT k.id, k.tenant_id, k.user_id, k.scopes
  FROM public.api_keys k
  WHERE k.key_hash = p_key_hash AND k.revoked_at IS NULL
$$;
REVOKE ALL ON FUNCTION resolve_api_key(text) FROM PUBLIC;

-- Grants: the runtime role appends; it can never delete, and may update only lifecycle and
-- embedding columns (content, topic, tags and times of creation are immutable).
GRANT USAGE ON SCHEMA public TO threengram_app, threengram_search;
GRANT SELECT ON tenants, users TO threengram_app;
GRANT SELECT ON api_keys TO threengram_app;
GRANT UPDATE (last_used_at) ON api_keys TO threengram_app;
GRANT SELECT, INSERT ON memories TO threengram_app;
GRANT UPDATE (embedding, embedding_model, embedding_dim, status, valid_to, closed_recorded_at) ON memories TO threengram_app;
GRANT SELECT, INSERT ON memory_events TO threengram_app;
GRANT EXECUTE ON FUNCTION resolve_api_key(text) TO threengram_app;
-- The search service only reads.
GRANT SELECT ON memories, memory_events TO threengram_search;
