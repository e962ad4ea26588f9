-- 0002: supersession edges, commitments (with their state machine), bi-temporal facts, the scope
-- registry and retrieval policy, import keys. Same rules as 0001: RLS on every tenant table,
-- composite foreign keys, and no DELETE (or content UPDATE) for the runtime role.

-- Memories remember the client key they were imported under, so a re-run import skips them.
ALTER TABLE memories ADD COLUMN import_key text CHECK (import_key IS NULL OR char_length(import_key) BETWEEN 1 AND 256);
CREATE UNIQUE INDEX memories_import_key_uq ON memories (tenant_id, import_key) WHERE import_key IS NOT NULL;

-- Event kinds grow with the domain.
ALTER TABLE memory_events DROP CONSTRAINT memory_events_event_kind_check;
ALTER TABLE memory_events ADD CONSTRAINT memory_events_event_kind_check CHECK (event_kind IN
  ('create', 'revise', 'supersede', 'resolve', 'unresolve', 'status_change', 'archive', 'import',
   'embed_failed', 'embed_done', 'fact'));

CREATE TABLE memory_edges (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL,
  -- from = successor (newer), to = predecessor (older).
  from_id uuid NOT NULL,
  to_id uuid NOT NULL,
  edge_type text NOT NULL CHECK (edge_type IN ('supersedes', 'updates', 'extends', 'derives')),
  created_by uuid,
  actor_kind text NOT NULL CHECK (actor_kind IN ('user_mcp', 'user_api', 'worker', 'importer', 'system')),
  proposal_id uuid,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant_id, from_id, to_id, edge_type),
  CHECK (from_id <> to_id),
  FOREIGN KEY (tenant_id, from_id) REFERENCES memories (tenant_id, id),
  FOREIGN KEY (tenant_id, to_id) REFERENCES memories (tenant_id, id)
);
-- A memory has at most one successor: the backstop behind revise's row lock.
CREATE UNIQUE INDEX memory_edges_one_successor_uq ON memory_edges (tenant_id, to_id) WHERE edge_type IN ('supersedes', 'updates');
CREATE INDEX memory_edges_from_idx ON memory_edges (tenant_id, from_id);

CREATE TABLE commitments (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL,
  memory_id uuid NOT NULL,
  status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'waiting', 'resolved', 'expired')),
  owner text CHECK (owner IS NULL OR char_length(owner) BETWEEN 1 AND 256),
  due_at timestamptz,
  next_surfacing_at timestamptz,
  resolved_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant_id, id),
  UNIQUE (tenant_id, memory_id),
  FOREIGN KEY (tenant_id, memory_id) REFERENCES memories (tenant_id, id)
);
CREATE INDEX commitments_status_idx ON commitments (tenant_id, status, next_surfacing_at);

-- The commitment state machine, enforced by the database as a backstop to the domain code. The
-- transition list must equal COMMITMENT_TRANSITIONS in packages/schema (a test compares them).
CREATE FUNCTION commitments_check_transition() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, public AS $$
BEGIN
  IF NEW.status = OLD.status THEN
    RETURN NEW;
  END IF;
  IF (OLD.status, NEW.status) IN (
    ('open', 'waiting'), ('open', 'resolved'), ('open', 'expired'),
    ('waiting', 'open'), ('waiting', 'resolved'), ('waiting', 'expired'),
    ('resolved', 'open'),
    ('expired', 'open')
  ) THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'invalid_transition: % -> %', OLD.status, NEW.status USING ERRCODE = 'check_violation';
END $$;
CREATE TRIGGER commitments_transition BEFORE UPDATE OF status ON commitments
  FOR EACH ROW EXECUTE FUNCTION commitments_check_transition();

CREATE TABLE facts (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL,
  -- The memory that asserted it (null for facts accepted from elsewhere later).
  memory_id uuid,
  subject text NOT NULL CHECK (char_length(subject) BETWEEN 1 AND 256),
  predicate text NOT NULL CHECK (char_length(predicate) BETWEEN 1 AND 256),
  value text NOT NULL CHECK (char_length(value) BETWEEN 1 AND 2000),
  confidence real CHECK (confidence IS NULL OR (confidence >= 0 AND confidence <= 1)),
  valid_from timestamptz NOT NULL DEFAULT now(),
  valid_to timestamptz,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  -- When a later assertion closed this generation (the second clock behind exact asKnownAt).
  closed_recorded_at timestamptz,
  import_key text CHECK (import_key IS NULL OR char_length(import_key) BETWEEN 1 AND 256),
  UNIQUE (tenant_id, id),
  CHECK (valid_to IS NULL OR valid_from <= valid_to),
  CHECK ((valid_to IS NULL) = (closed_recorded_at IS NULL)),
  FOREIGN KEY (tenant_id, memory_id) REFERENCES memories (tenant_id, id)
);
CREATE INDEX facts_subject_idx ON facts (tenant_id, subject, predicate, valid_from);
CREATE INDEX facts_predicate_idx ON facts (tenant_id, predicate, valid_from);
-- One open generation per subject + predicate.
CREATE UNIQUE INDEX facts_import_key_uq ON facts (tenant_id, import_key) WHERE import_key IS NOT NULL;
CREATE UNIQUE INDEX facts_one_open_uq ON facts (tenant_id, subject, predicate) WHERE valid_to IS NULL;

CREATE TABLE scopes (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  name text NOT NULL CHECK (name ~ '^[a-z0-9][a-z0-9-]*$' AND char_length(name) <= 64),
  aliases text[] NOT NULL DEFAULT '{}' CHECK (cardinality(aliases) <= 16),
  -- Projects mapped to this scope: a write with this project and no scope lands here.
  projects text[] NOT NULL DEFAULT '{}' CHECK (cardinality(projects) <= 64),
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant_id, id),
  UNIQUE (tenant_id, name)
);

CREATE TABLE retrieval_policies (
  tenant_id uuid PRIMARY KEY REFERENCES tenants (id),
  mode text NOT NULL DEFAULT 'off' CHECK (mode IN ('off', 'default', 'require')),
  default_scope text,
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((mode = 'default') = (default_scope IS NOT NULL))
);

-- Every tenant starts with the two usual scopes.
INSERT INTO scopes (id, tenant_id, name)
SELECT gen_random_uuid(), t.id, s.name FROM tenants t CROSS JOIN (VALUES ('personal'), ('work')) AS s (name)
ON CONFLICT DO NOTHING;

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['memory_edges', 'commitments', 'facts', 'scopes', 'retrieval_policies'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format($p$CREATE POLICY tenant_isolation ON %I
      USING (tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid)
      WITH CHECK (tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid)$p$, t);
  END LOOP;
END $$;

-- Append-only grants: no DELETE on edges, commitments or facts; UPDATE only on lifecycle columns.
GRANT SELECT, INSERT ON memory_edges TO threengram_app;
GRANT SELECT, INSERT ON commitments TO threengram_app;
GRANT UPDATE (status, owner, due_at, next_surfacing_at, resolved_at, updated_at) ON commitments TO threengram_app;
GRANT SELECT, INSERT ON facts TO threengram_app;
GRANT UPDATE (valid_to, closed_recorded_at) ON facts TO threengram_app;
-- The registry is configuration, not memory: a scope may be deleted (memories keep their scope text).
GRANT SELECT, INSERT, UPDATE, DELETE ON scopes TO threengram_app;
GRANT SELECT, INSERT, UPDATE ON retrieval_policies TO threengram_app;
GRANT SELECT ON memory_edges, commitments, facts, scopes, retrieval_policies TO threengram_search;
