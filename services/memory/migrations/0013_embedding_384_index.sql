-- 0013: an HNSW index for 384-dimension vectors, beside 0001's for 512 (ADR-0004: one partial
-- index per dimension over the untyped vector column). The modern small sentence-embedding models
-- the bundled default moves to (bge-small-en-v1.5, e5-small-v2, all-MiniLM-L6-v2) give 384
-- dimensions; without this index their vector leg would scan the table in distributed mode, and
-- the consolidator's similar-pair reads would in both modes. On a database written before the
-- change no row has 384 dimensions yet, so the index is built empty and costs nothing here; it
-- fills as the background re-embedding stores the new model's vectors (ADR-0038).
CREATE INDEX memories_embedding_384_hnsw ON memories
  USING hnsw ((embedding::vector(384)) vector_cosine_ops) WHERE embedding_dim = 384;
