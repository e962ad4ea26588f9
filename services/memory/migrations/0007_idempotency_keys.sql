-- 0007: idempotency keys for remember and revise. A client that sends a key with a write may
-- repeat the write after any failure: the first result comes back instead of a second memory.
-- The key is stored in the write's own transaction, so it exists exactly when the memory does.

CREATE TABLE idempotency_keys (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  idempotency_key text NOT NULL CHECK (char_length(idempotency_key) BETWEEN 1 AND 255),
  operation text NOT NULL CHECK (operation IN ('remember', 'revise')),
  -- sha256 over the operation and the request as parsed: a retry must repeat the same request.
  request_hash text NOT NULL CHECK (char_length(request_hash) = 64),
  memory_id uuid NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, idempotency_key),
  -- Removing a memory (an operator's erasure) takes its key with it.
  FOREIGN KEY (tenant_id, memory_id) REFERENCES memories (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

ALTER TABLE idempotency_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE idempotency_keys FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON idempotency_keys
  USING (tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid)
  WITH CHECK (tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid);
-- The expiry sweep removes keys past their retention across tenants (see 0006's housekeeping).
CREATE POLICY housekeeping ON idempotency_keys TO threengram_app
  USING (current_setting('app.housekeeping', true) = 'on');

-- A key past its retention may be taken by a new write before the sweep removed it (the update).
GRANT SELECT, INSERT, DELETE ON idempotency_keys TO threengram_app;
GRANT UPDATE (operation, request_hash, memory_id, created_at) ON idempotency_keys TO threengram_app;
