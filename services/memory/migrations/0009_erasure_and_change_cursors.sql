-- 0009: lawful erasure in the append-only store (ADR-0021) and change cursors for briefing and
-- handoff (ADR-0022).
--
-- Erasure: the runtime role still may not rewrite content. One SECURITY DEFINER function,
-- erase_memories, owned by the NOLOGIN role threengram_eraser (the only role holding UPDATE on
-- content columns), replaces an erased memory's text and everything derived from it with a
-- marker and appends the audit trail. RLS is forced on every table it touches and the eraser
-- does not bypass it, so the function sees the tenant bound to the calling transaction and
-- nothing else.
--
-- Change cursors: every audit event records the transaction that wrote it (xid8), so a briefing
-- can hand out its snapshot and a later one can list exactly the events that snapshot did not see.

DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'threengram_eraser') THEN
    CREATE ROLE threengram_eraser NOLOGIN NOSUPERUSER NOBYPASSRLS;
  END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;

-- ---- What an erasure leaves behind ----

ALTER TABLE memories ADD COLUMN erased_at timestamptz;
ALTER TABLE facts ADD COLUMN erased_at timestamptz;
ALTER TABLE fact_proposals ADD COLUMN erased_at timestamptz;

-- The full-text vector is derived from topic and content, so an erased row must carry none. A
-- generated column's expression cannot be altered in PostgreSQL 15, so it is dropped and added
-- again (one rewrite of the table) with its GIN index.
ALTER TABLE memories DROP COLUMN search_tsv;
ALTER TABLE memories ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS (
  CASE WHEN erased_at IS NULL THEN to_tsvector('english'::regconfig, topic || ' ' || content) END
) STORED;
CREATE INDEX memories_tsv_idx ON memories USING gin (search_tsv);

-- Erased facts and fact proposals all read the same marker, so they leave the uniqueness rules
-- that exist for live claims.
DROP INDEX facts_one_open_uq;
CREATE UNIQUE INDEX facts_one_open_uq ON facts (tenant_id, subject, predicate) WHERE valid_to IS NULL AND erased_at IS NULL;
DROP INDEX fact_proposals_claim_uq;
CREATE UNIQUE INDEX fact_proposals_claim_uq ON fact_proposals (tenant_id, memory_id, subject, predicate, value) WHERE erased_at IS NULL;

-- One row per erasure request that removed anything: who asked (the surface, the user when there
-- is one, and the database login that ran it), why, and how much went. Never any content.
CREATE TABLE erasures (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  actor_kind text NOT NULL CHECK (actor_kind IN ('user_mcp', 'user_api', 'worker', 'importer', 'system', 'operator')),
  actor_id uuid,
  database_role text NOT NULL DEFAULT session_user,
  reason text NOT NULL CHECK (reason IN ('data_subject_request', 'secret', 'mistake', 'other')),
  -- A ticket or case number, restricted to identifier characters so no prose can land here.
  reference text CHECK (reference IS NULL OR reference ~ '^[A-Za-z0-9][A-Za-z0-9._:/#-]{0,127}$'),
  memories integer NOT NULL CHECK (memories >= 0),
  facts integer NOT NULL CHECK (facts >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant_id, id)
);
CREATE INDEX erasures_tenant_idx ON erasures (tenant_id, created_at DESC);
ALTER TABLE erasures ENABLE ROW LEVEL SECURITY;
ALTER TABLE erasures FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON erasures
  USING (tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid)
  WITH CHECK (tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid);

-- ---- Audit events: the erase kind, the operator actor, and the writing transaction ----

-- Widens a CHECK of the form `col = ANY (ARRAY[...])` by one value, keeping whatever values other
-- migrations added before this one (the list is read back from the catalog, not restated here).
CREATE FUNCTION pg_temp.widen_value_check(p_table regclass, p_constraint name, p_column name, p_value text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  allowed text[];
BEGIN
  SELECT array_agg(DISTINCT v ORDER BY v) INTO allowed FROM (
    SELECT (regexp_matches(pg_get_constraintdef(c.oid), '''([^'']+)''', 'g'))[1] AS v
      FROM pg_constraint c WHERE c.conrelid = p_table AND c.conname = p_constraint
    UNION SELECT p_value
  ) values_found;
  EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', p_table, p_constraint);
  EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I CHECK (%I = ANY (%L::text[]))', p_table, p_constraint, p_column, allowed);
END $$;
SELECT pg_temp.widen_value_check('memory_events', 'memory_events_event_kind_check', 'event_kind', 'erase');
SELECT pg_temp.widen_value_check('memory_events', 'memory_events_actor_kind_check', 'actor_kind', 'operator');
DROP FUNCTION pg_temp.widen_value_check(regclass, name, name, text);

-- The top-level transaction that wrote each event. Rows written before this migration all get the
-- migration's own id, which every later snapshot sees as committed.
ALTER TABLE memory_events ADD COLUMN txid xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX memory_events_txid_idx ON memory_events (tenant_id, txid);

-- The key that signs change cursors (HMAC-SHA256 in the memory service), one per database, so
-- every memory replica accepts the cursors any of them issued and no other deployment's.
CREATE TABLE change_cursor_keys (
  id smallint PRIMARY KEY CHECK (id = 1),
  secret text NOT NULL CHECK (secret ~ '^[0-9a-f]{64}$'),
  created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO change_cursor_keys (id, secret)
VALUES (1, encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text || clock_timestamp()::text, 'UTF8')), 'hex'));

-- ---- The memory:erase scope may be held by keys and OAuth grants ----

ALTER TABLE api_keys DROP CONSTRAINT api_keys_scopes_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_scopes_check
  CHECK (scopes <@ ARRAY['memory:read', 'memory:write', 'memory:erase']::text[] AND cardinality(scopes) > 0);
ALTER TABLE oauth_authorization_codes DROP CONSTRAINT oauth_authorization_codes_scopes_check;
ALTER TABLE oauth_authorization_codes ADD CONSTRAINT oauth_authorization_codes_scopes_check
  CHECK (scopes <@ ARRAY['memory:read', 'memory:write', 'memory:erase']::text[] AND cardinality(scopes) > 0);
ALTER TABLE oauth_refresh_tokens DROP CONSTRAINT oauth_refresh_tokens_scopes_check;
ALTER TABLE oauth_refresh_tokens ADD CONSTRAINT oauth_refresh_tokens_scopes_check
  CHECK (scopes <@ ARRAY['memory:read', 'memory:write', 'memory:erase']::text[] AND cardinality(scopes) > 0);

-- ---- The erase function ----

-- Erases the given memories of the tenant bound to this transaction (and, with p_subject, every
-- fact about that subject, including facts no memory asserted). For each memory not yet erased:
-- content and topic become the marker, tags are emptied, the content hash and import key go,
-- the embedding goes (the full-text vector follows from erased_at), a live memory is archived;
-- its facts and the facts accepted from its proposals lose subject, predicate and value; its fact
-- proposals and the consolidation proposals naming it lose their rationales (open ones are
-- rejected, so they are never applied or proposed again); its commitment loses its owner and
-- surfacing. Ids, edges, times and the event history stay. One `erase` event per memory and one
-- erasures row record who, why and when.
--
-- Returns {"erased": [ids], "alreadyErased": [ids], "notFound": [ids], "facts": n, "erasureId": id|null}.
-- An id of another tenant is invisible here (RLS), so it is reported as not found, like an unknown one.
CREATE FUNCTION erase_memories(p_tenant_id uuid, p_memory_ids uuid[], p_subject text, p_erasure_id uuid,
                               p_actor_kind text, p_actor_id uuid, p_reason text, p_reference text)
RETURNS jsonb
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$
#variable_conflict use_column
DECLARE
  marker constant text := '[erased]';
  found_ids uuid[];
  target_ids uuid[];
  live_ids uuid[];
  n_facts integer;
BEGIN
  IF p_tenant_id IS NULL OR p_tenant_id IS DISTINCT FROM NULLIF(current_setting('app.tenant_id', true), '')::uuid THEN
    RAISE EXCEPTION 'erase_memories: the tenant is not the one bound to this transaction' USING ERRCODE = 'insufficient_privilege';
  END IF;

  -- Lock the rows first, in id order, so concurrent erasures and revises of them serialise.
  PERFORM 1 FROM public.memories m WHERE m.tenant_id = p_tenant_id AND m.id = ANY (p_memory_ids) ORDER BY m.id FOR UPDATE;
  SELECT coalesce(array_agg(m.id ORDER BY m.id), '{}'),
         coalesce(array_agg(m.id ORDER BY m.id) FILTER (WHERE m.erased_at IS NULL), '{}'),
         coalesce(array_agg(m.id ORDER BY m.id) FILTER (WHERE m.erased_at IS NULL AND m.status = 'active' AND m.valid_to IS NULL), '{}')
    INTO found_ids, target_ids, live_ids
    FROM public.memories m WHERE m.tenant_id = p_tenant_id AND m.id = ANY (p_memory_ids);

  UPDATE public.memories m
     SET topic = marker, content = marker, tags = '{}', content_hash = 'erased:' || m.id::text, import_key = NULL,
         embedding = NULL, embedding_model = NULL, embedding_dim = NULL, erased_at = now(),
         status = CASE WHEN m.id = ANY (live_ids) THEN 'archived' ELSE m.status END
   WHERE m.tenant_id = p_tenant_id AND m.id = ANY (target_ids);

  UPDATE public.facts f
     SET subject = marker, predicate = marker, value = marker, import_key = NULL, erased_at = now()
   WHERE f.tenant_id = p_tenant_id AND f.erased_at IS NULL
     AND (f.memory_id = ANY (target_ids)
          OR f.id IN (SELECT p.fact_id FROM public.fact_proposals p
                       WHERE p.tenant_id = p_tenant_id AND p.memory_id = ANY (target_ids) AND p.fact_id IS NOT NULL)
          OR (p_subject IS NOT NULL AND f.subject = p_subject));
  GET DIAGNOSTICS n_facts = ROW_COUNT;

  UPDATE public.fact_proposals p
     SET subject = marker, predicate = marker, value = marker,
         rationale = CASE WHEN p.rationale IS NULL THEN NULL ELSE marker END,
         decision_rationale = CASE WHEN p.decision_rationale IS NULL THEN NULL ELSE marker END,
         status = CASE WHEN p.status = 'proposed' THEN 'rejected' ELSE p.status END,
         decided_at = coalesce(p.decided_at, now()), erased_at = now()
   WHERE p.tenant_id = p_tenant_id AND p.erased_at IS NULL AND p.memory_id = ANY (target_ids);

  UPDATE public.consolidation_proposals p
     SET rationale = CASE WHEN p.rationale IS NULL THEN NULL ELSE marker END,
         decision_rationale = CASE WHEN p.decision_rationale IS NULL THEN NULL ELSE marker END,
         status = CASE WHEN p.status = 'proposed' THEN 'rejected' ELSE p.status END,
         decided_at = coalesce(p.decided_at, now())
   WHERE p.tenant_id = p_tenant_id AND (p.from_id = ANY (target_ids) OR p.to_id = ANY (target_ids));

  UPDATE public.commitments c
     SET owner = NULL, next_surfacing_at = NULL, updated_at = now()
   WHERE c.tenant_id = p_tenant_id AND c.memory_id = ANY (target_ids);

  -- A retry key is the client's own text and its request hash is a hash of the content, so both
  -- go: a late retry with that key then simply writes anew, as after the key's 24 h.
  DELETE FROM public.idempotency_keys k WHERE k.tenant_id = p_tenant_id AND k.memory_id = ANY (target_ids);

  -- Further copies derived from memory text (for example per-tenant term statistics) get one
  -- statement each here, keyed on target_ids, in the migration that adds the table
  -- (CREATE OR REPLACE FUNCTION, with the grants threengram_eraser needs on it).

  INSERT INTO public.memory_events (id, tenant_id, memory_id, event_kind, actor_kind, payload)
  SELECT gen_random_uuid(), p_tenant_id, t.id, 'erase', p_actor_kind,
         jsonb_strip_nulls(jsonb_build_object('erasureId', p_erasure_id, 'reason', p_reason, 'reference', p_reference,
                                              'by', p_actor_id, 'archived', t.id = ANY (live_ids)))
    FROM unnest(target_ids) AS t (id);

  IF cardinality(target_ids) > 0 OR n_facts > 0 THEN
    INSERT INTO public.erasures (id, tenant_id, actor_kind, actor_id, reason, reference, memories, facts)
    VALUES (p_erasure_id, p_tenant_id, p_actor_kind, p_actor_id, p_reason, p_reference, cardinality(target_ids), n_facts);
  END IF;

  RETURN jsonb_build_object(
    'erased', to_jsonb(target_ids),
    'alreadyErased', to_jsonb(ARRAY(SELECT i FROM unnest(found_ids) i WHERE i <> ALL (target_ids) ORDER BY i)),
    'notFound', to_jsonb(ARRAY(SELECT DISTINCT i FROM unnest(p_memory_ids) i WHERE i <> ALL (found_ids) ORDER BY i)),
    'facts', n_facts,
    'erasureId', CASE WHEN cardinality(target_ids) > 0 OR n_facts > 0 THEN p_erasure_id END);
END $$;
REVOKE ALL ON FUNCTION erase_memories(uuid, uuid[], text, uuid, text, uuid, text, text) FROM PUBLIC;

-- The eraser may rewrite exactly the columns the function scrubs, insert the audit rows, and read
-- what it must match on. It deletes nothing but retry keys, and it cannot log in: only the
-- function acts as it.
GRANT USAGE ON SCHEMA public TO threengram_eraser;
GRANT SELECT ON memories, facts, fact_proposals, consolidation_proposals, commitments TO threengram_eraser;
GRANT UPDATE (topic, content, tags, content_hash, import_key, embedding, embedding_model, embedding_dim, erased_at, status)
  ON memories TO threengram_eraser;
GRANT UPDATE (subject, predicate, value, import_key, erased_at) ON facts TO threengram_eraser;
GRANT UPDATE (subject, predicate, value, rationale, decision_rationale, status, decided_at, erased_at) ON fact_proposals TO threengram_eraser;
GRANT UPDATE (rationale, decision_rationale, status, decided_at) ON consolidation_proposals TO threengram_eraser;
GRANT UPDATE (owner, next_surfacing_at, updated_at) ON commitments TO threengram_eraser;
GRANT INSERT ON memory_events, erasures TO threengram_eraser;
GRANT SELECT, DELETE ON idempotency_keys TO threengram_eraser;

-- Handing the function to the eraser: a non-superuser migrator must be a member of the new owner,
-- and the owner needs CREATE on the schema at that moment (taken back straight after).
DO $$
DECLARE
  is_superuser boolean := (SELECT rolsuper FROM pg_roles WHERE rolname = current_user);
BEGIN
  IF NOT is_superuser THEN
    EXECUTE format('GRANT threengram_eraser TO %I', current_user);
    GRANT CREATE ON SCHEMA public TO threengram_eraser;
  END IF;
  ALTER FUNCTION erase_memories(uuid, uuid[], text, uuid, text, uuid, text, text) OWNER TO threengram_eraser;
  IF NOT is_superuser THEN
    REVOKE CREATE ON SCHEMA public FROM threengram_eraser;
  END IF;
END $$;

-- The runtime role calls the function and reads the audit trail; it still cannot UPDATE content.
GRANT EXECUTE ON FUNCTION erase_memories(uuid, uuid[], text, uuid, text, uuid, text, text) TO threengram_app;
GRANT SELECT ON erasures, change_cursor_keys TO threengram_app;
