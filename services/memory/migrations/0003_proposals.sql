-- 0003: proposals — what background work suggests and a person accepts or rejects. Two kinds:
-- consolidation proposals (an edge between two memories) and fact proposals (a fact extracted from
-- a memory). Same rules as before: RLS forced on every table, composite foreign keys, and the
-- runtime role may only insert rows and move their status (no DELETE, no rewriting a proposal).

-- One id space for both kinds: every proposal id is registered here with its kind first, and each
-- proposal table references (tenant, id, kind) with its own kind pinned. An id can therefore never
-- name both an edge proposal and a fact proposal, and the id alone tells which kind it is.
CREATE TABLE proposal_ids (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  kind text NOT NULL CHECK (kind IN ('edge', 'fact')),
  UNIQUE (tenant_id, id, kind)
);

CREATE TABLE consolidation_proposals (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL,
  kind text NOT NULL DEFAULT 'edge' CHECK (kind = 'edge'),
  -- from = successor (newer), to = predecessor (older), as on memory_edges.
  from_id uuid NOT NULL,
  to_id uuid NOT NULL,
  edge_type text NOT NULL CHECK (edge_type IN ('extends', 'updates', 'supersedes')),
  -- The successor's type when the pair was found (what the reviewer is asked about).
  memory_type text NOT NULL
    CHECK (memory_type IN ('decision', 'commitment', 'blocker', 'fact', 'preference', 'pattern', 'note', 'event')),
  similarity real NOT NULL CHECK (similarity >= -1 AND similarity <= 1),
  -- Why it was proposed (written by the consolidator: similarity and threshold, never content).
  rationale text CHECK (rationale IS NULL OR char_length(rationale) BETWEEN 1 AND 2000),
  status text NOT NULL DEFAULT 'proposed' CHECK (status IN ('proposed', 'applied', 'rejected')),
  decided_at timestamptz,
  decided_by uuid,
  -- The reviewer's reason, when one was given with the decision.
  decision_rationale text CHECK (decision_rationale IS NULL OR char_length(decision_rationale) BETWEEN 1 AND 2000),
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant_id, id),
  CHECK (from_id <> to_id),
  CHECK ((status = 'proposed') = (decided_at IS NULL)),
  FOREIGN KEY (tenant_id, id, kind) REFERENCES proposal_ids (tenant_id, id, kind) DEFERRABLE INITIALLY DEFERRED,
  FOREIGN KEY (tenant_id, from_id) REFERENCES memories (tenant_id, id),
  FOREIGN KEY (tenant_id, to_id) REFERENCES memories (tenant_id, id),
  FOREIGN KEY (tenant_id, decided_by) REFERENCES users (tenant_id, id)
);
-- A pair of memories is proposed at most once, in either orientation and whatever the edge type:
-- while the proposal is open nothing duplicates it, and once it is applied or rejected the pair is
-- never proposed again (the consolidator re-running finds the pair and the insert does nothing).
CREATE UNIQUE INDEX consolidation_proposals_pair_uq
  ON consolidation_proposals (tenant_id, LEAST(from_id, to_id), GREATEST(from_id, to_id));
CREATE INDEX consolidation_proposals_status_idx ON consolidation_proposals (tenant_id, status, created_at DESC, id);

CREATE TABLE fact_proposals (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL,
  kind text NOT NULL DEFAULT 'fact' CHECK (kind = 'fact'),
  memory_id uuid NOT NULL,
  subject text NOT NULL CHECK (char_length(subject) BETWEEN 1 AND 256),
  predicate text NOT NULL CHECK (char_length(predicate) BETWEEN 1 AND 256),
  value text NOT NULL CHECK (char_length(value) BETWEEN 1 AND 2000),
  confidence real CHECK (confidence IS NULL OR (confidence >= 0 AND confidence <= 1)),
  -- Which extractor produced it, e.g. "rules/1" or "llm/<model>".
  extractor text NOT NULL CHECK (char_length(extractor) BETWEEN 1 AND 128),
  -- Which rule matched (a pattern name, never the matched text).
  rationale text CHECK (rationale IS NULL OR char_length(rationale) BETWEEN 1 AND 2000),
  status text NOT NULL DEFAULT 'proposed' CHECK (status IN ('proposed', 'applied', 'rejected')),
  decided_at timestamptz,
  decided_by uuid,
  decision_rationale text CHECK (decision_rationale IS NULL OR char_length(decision_rationale) BETWEEN 1 AND 2000),
  -- The fact written when the proposal was applied.
  fact_id uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant_id, id),
  CHECK ((status = 'proposed') = (decided_at IS NULL)),
  CHECK ((status = 'applied') = (fact_id IS NOT NULL)),
  FOREIGN KEY (tenant_id, id, kind) REFERENCES proposal_ids (tenant_id, id, kind) DEFERRABLE INITIALLY DEFERRED,
  FOREIGN KEY (tenant_id, memory_id) REFERENCES memories (tenant_id, id),
  FOREIGN KEY (tenant_id, decided_by) REFERENCES users (tenant_id, id),
  FOREIGN KEY (tenant_id, fact_id) REFERENCES facts (tenant_id, id)
);
-- Re-running extraction over the same memory proposes nothing new, and a rejected fact stays rejected.
CREATE UNIQUE INDEX fact_proposals_claim_uq ON fact_proposals (tenant_id, memory_id, subject, predicate, value);
CREATE INDEX fact_proposals_status_idx ON fact_proposals (tenant_id, status, created_at DESC, id);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['proposal_ids', 'consolidation_proposals', 'fact_proposals'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format($p$CREATE POLICY tenant_isolation ON %I
      USING (tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid)
      WITH CHECK (tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid)$p$, t);
  END LOOP;
END $$;

-- The tenant directory: the consolidator's scheduled jobs visit every tenant, so the memory service
-- must list tenant ids without a tenant bound. This extra policy lets the runtime role read the
-- tenants table only inside a transaction that switched the directory on (a transaction-local
-- setting only the ListTenants path sets); every other read still sees at most its own tenant.
CREATE POLICY tenant_directory ON tenants FOR SELECT TO threengram_app
  USING (current_setting('app.tenant_directory', true) = 'on');

-- Grants: insert proposals, move their status; never delete or rewrite what was proposed.
GRANT SELECT, INSERT ON proposal_ids TO threengram_app;
GRANT SELECT, INSERT ON consolidation_proposals, fact_proposals TO threengram_app;
GRANT UPDATE (status, decided_at, decided_by, decision_rationale) ON consolidation_proposals TO threengram_app;
GRANT UPDATE (status, decided_at, decided_by, decision_rationale, fact_id) ON fact_proposals TO threengram_app;
-- The similar-pair scan skips pairs that were already proposed or decided.
GRANT SELECT ON consolidation_proposals TO threengram_search;
