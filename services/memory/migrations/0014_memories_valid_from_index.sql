-- 0014: search's recency leg and the briefing's memory sections order by valid time (when a
-- memory became true, which a write may now set to the past) instead of recorded time. This is
-- the index those reads walk, the valid-time twin of 0001's memories_tenant_recorded_idx.
CREATE INDEX memories_tenant_valid_idx ON memories (tenant_id, valid_from DESC, id);
