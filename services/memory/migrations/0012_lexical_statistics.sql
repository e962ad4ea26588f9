-- 0012: tokenisation that fits memories, and the per-tenant statistics BM25 needs (ADR-0025).
--
-- Tokenisation. The full-text vector of a memory is now the union of
--   * english: stemmed words (squats -> squat), as before;
--   * threengram_raw: the same words lower-cased but not stemmed, english stop words dropped
--     (the exact form ranks above a mere stem match, and text in another language still matches
--     word for word, which is the `simple` fallback);
--   * every compound identifier kept whole (back_squat, top_set.weight_kg, text-embedding-3-small,
--     camelCase, 120kg) and split into its parts (back, squat, top, set, weight, kg, camel, case,
--     120). The default parser would keep some and split others.
-- The query goes through the same function (memory_search_vector), so both sides always agree.
-- It is stored as memories.lexical_tsv (below).
--
-- Statistics. BM25 weighs a word by how rare it is in the tenant and a memory by how long it is
-- relative to the tenant's average. Document frequencies are counted at query time by the
-- full-text probe (an index probe per word, capped); what cannot be counted cheaply there, the
-- number of searchable memories and their total length, is kept here by a trigger on memories.
-- Rows are sharded by backend so concurrent writers of one tenant rarely wait on the same row;
-- a reader sums at most a handful of rows. Erased memories have no vector and leave the sums,
-- whoever erases them (the trigger fires for erase_memories too, as threengram_eraser).

CREATE TEXT SEARCH DICTIONARY threengram_raw_dict (TEMPLATE = pg_catalog.simple, STOPWORDS = english);
CREATE TEXT SEARCH CONFIGURATION threengram_raw (COPY = pg_catalog.simple);
ALTER TEXT SEARCH CONFIGURATION threengram_raw
  ALTER MAPPING FOR asciiword, word, numword, asciihword, hword, numhword, hword_asciipart, hword_part, hword_numpart
  WITH threengram_raw_dict;

-- Compound identifiers: words joined by _ . - or /, camelCase words, and numbers glued to units,
-- as written (the case is needed to find the camel boundaries).
CREATE FUNCTION memory_search_compounds(p_text text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT SET search_path = pg_catalog
AS $$
  SELECT coalesce(array_agg(DISTINCT c[1]), '{}')
    FROM regexp_matches(p_text, '([A-Za-z0-9]+(?:[_./-][A-Za-z0-9]+)+|[A-Za-z][a-z]+[A-Z][A-Za-z0-9]*|[0-9]+[A-Za-z]+)', 'g') AS c
$$;

-- The full-text vector of a text: stemmed words, raw words, each compound whole and its parts.
CREATE FUNCTION memory_search_vector(p_text text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT SET search_path = pg_catalog
AS $$
  SELECT to_tsvector('english'::regconfig, p_text)
      || to_tsvector('public.threengram_raw'::regconfig, p_text)
      || array_to_tsvector(ARRAY(SELECT lower(w) FROM unnest(c.compounds) AS w))
      || to_tsvector('public.threengram_raw'::regconfig,
           regexp_replace(regexp_replace(regexp_replace(regexp_replace(array_to_string(c.compounds, ' '),
             '([a-z])([A-Z])', '\1 \2', 'g'), '[_./-]', ' ', 'g'),
             '([A-Za-z])([0-9])', '\1 \2', 'g'), '([0-9])([A-Za-z])', '\1 \2', 'g'))
    FROM (SELECT public.memory_search_compounds(p_text) AS compounds) AS c
$$;

-- The vector lives in its own column beside search_tsv (the english-only vector 0009 defined, which
-- the chronological listing and the default ranking keep using): the ranking policy chooses the
-- column (SearchPolicy.tokens), so both can be measured on the fixtures and the default moved by a
-- policy change alone. NULL for erased rows, like search_tsv.
ALTER TABLE memories ADD COLUMN lexical_tsv tsvector GENERATED ALWAYS AS (
  CASE WHEN erased_at IS NULL THEN memory_search_vector(topic || ' ' || content) END
) STORED;
CREATE INDEX memories_lexical_tsv_idx ON memories USING gin (lexical_tsv);

CREATE TABLE memory_text_stats (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  shard smallint NOT NULL CHECK (shard BETWEEN 0 AND 7),
  -- Memories with a lexical vector (not erased), and the sum of their lexical_tsv lexeme counts.
  docs bigint NOT NULL DEFAULT 0,
  lexemes bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, shard)
);
ALTER TABLE memory_text_stats ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_text_stats FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON memory_text_stats
  USING (tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid)
  WITH CHECK (tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid);

-- Runs as whoever writes the memory (the runtime role, the eraser inside erase_memories, an
-- operator), under that transaction's tenant, so RLS holds here exactly as on memories.
CREATE FUNCTION memory_text_stats_apply() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, public
AS $$
DECLARE
  d_docs integer := 0;
  d_lexemes integer := 0;
  t_id uuid;
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.lexical_tsv IS NOT NULL THEN
    d_docs := d_docs - 1;
    d_lexemes := d_lexemes - length(OLD.lexical_tsv);
    t_id := OLD.tenant_id;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.lexical_tsv IS NOT NULL THEN
    d_docs := d_docs + 1;
    d_lexemes := d_lexemes + length(NEW.lexical_tsv);
    t_id := NEW.tenant_id;
  END IF;
  IF d_docs <> 0 OR d_lexemes <> 0 THEN
    INSERT INTO memory_text_stats AS s (tenant_id, shard, docs, lexemes)
    VALUES (t_id, pg_backend_pid() % 8, d_docs, d_lexemes)
    ON CONFLICT (tenant_id, shard) DO UPDATE SET docs = s.docs + EXCLUDED.docs, lexemes = s.lexemes + EXCLUDED.lexemes;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER memory_text_stats_insert AFTER INSERT ON memories
  FOR EACH ROW EXECUTE FUNCTION memory_text_stats_apply();
-- Only a change of the vector moves the sums (erasure; an embedding or status update does not).
CREATE TRIGGER memory_text_stats_update AFTER UPDATE OF topic, content, erased_at ON memories
  FOR EACH ROW WHEN (OLD.lexical_tsv IS DISTINCT FROM NEW.lexical_tsv) EXECUTE FUNCTION memory_text_stats_apply();
CREATE TRIGGER memory_text_stats_delete AFTER DELETE ON memories
  FOR EACH ROW EXECUTE FUNCTION memory_text_stats_apply();

-- Existing memories: summed once here. RLS is forced on memories, so the owner lifts it for the
-- one statement (inside this migration's transaction) to see every tenant.
ALTER TABLE memories NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memory_text_stats NO FORCE ROW LEVEL SECURITY;
INSERT INTO memory_text_stats (tenant_id, shard, docs, lexemes)
SELECT tenant_id, 0, count(*), coalesce(sum(length(lexical_tsv)), 0)
  FROM memories WHERE lexical_tsv IS NOT NULL GROUP BY tenant_id;
ALTER TABLE memories FORCE ROW LEVEL SECURITY;
ALTER TABLE memory_text_stats FORCE ROW LEVEL SECURITY;

GRANT SELECT, INSERT, UPDATE ON memory_text_stats TO threengram_app, threengram_eraser;
GRANT SELECT ON memory_text_stats TO threengram_search;
