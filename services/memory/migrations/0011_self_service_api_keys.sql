-- A signed-in person manages their own API keys through the memory service (the web UI's keys
-- page), so the runtime role, not only the owner, now issues and revokes keys. Row-level security
-- on api_keys (enabled in 0001) keeps every such write inside the transaction's tenant, and the
-- service narrows it further to the calling user. Revocation only ever sets revoked_at: keys are
-- never deleted, and no other column of an issued key can change.
GRANT INSERT ON api_keys TO threengram_app;
GRANT UPDATE (revoked_at) ON api_keys TO threengram_app;
