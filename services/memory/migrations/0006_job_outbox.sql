-- 0006: the transactional outbox. A write that needs background work (an embedding retry, fact
-- extraction) records the job here in its own transaction, so the job exists exactly when the
-- memory does; the memory service's relay moves pending rows to the queue (BullMQ, or the
-- in-process queue in standalone mode) at least once. A Redis outage only lets rows pile up.

CREATE TABLE job_outbox (
  id bigserial PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  queue text NOT NULL CHECK (char_length(queue) BETWEEN 1 AND 64),
  job_name text NOT NULL CHECK (char_length(job_name) BETWEEN 1 AND 64),
  -- Ids only (tenant, memory): never memory content.
  payload jsonb NOT NULL,
  -- The queue's deduplication id: a job still waiting there absorbs a second relay of its row.
  job_id text NOT NULL CHECK (char_length(job_id) BETWEEN 1 AND 256),
  -- The W3C trace context (traceparent/tracestate) of the write that recorded the job, so the job
  -- continues that trace although the relay queues it later; NULL when tracing is off.
  trace_context jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- When the relay handed the job to the queue; relayed rows are kept a day as the record of it.
  relayed_at timestamptz
);
CREATE INDEX job_outbox_pending_idx ON job_outbox (id) WHERE relayed_at IS NULL;
CREATE INDEX job_outbox_relayed_idx ON job_outbox (relayed_at) WHERE relayed_at IS NOT NULL;

ALTER TABLE job_outbox ENABLE ROW LEVEL SECURITY;
ALTER TABLE job_outbox FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON job_outbox
  USING (tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid)
  WITH CHECK (tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid);
-- The relay and the expiry sweep work across tenants, like the tenant directory (migration
-- 0003): only a transaction that switched app.housekeeping on sees other tenants' rows, and only
-- the memory service's background loop sets it.
CREATE POLICY housekeeping ON job_outbox TO threengram_app
  USING (current_setting('app.housekeeping', true) = 'on')
  WITH CHECK (current_setting('app.housekeeping', true) = 'on');

-- Writes insert jobs; the relay marks them relayed and, a day later, removes them. Job rows are
-- not memory data, so deleting them is not a breach of append-only.
GRANT SELECT, INSERT, DELETE ON job_outbox TO threengram_app;
GRANT UPDATE (relayed_at) ON job_outbox TO threengram_app;
GRANT USAGE ON SEQUENCE job_outbox_id_seq TO threengram_app;
