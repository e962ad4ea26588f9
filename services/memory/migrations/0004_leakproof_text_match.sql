-- 0004: let full-text matching use its GIN index under row-level security.
--
-- Under RLS, PostgreSQL evaluates a query's conditions after the policy's unless the function
-- behind them is marked LEAKPROOF (so a function cannot observe rows the policy hides). The
-- tsvector @@ tsquery operator is not marked, so every full-text condition the search role runs
-- became a filter over the whole tenant instead of a GIN index probe: ~55 ms per probe at 100k
-- memories, against ~1 ms once marked (docs/benchmarks.md). The function reports only whether a
-- stored vector matches the caller's own query and raises no data-dependent error, so marking it
-- reveals nothing the result does not. Only a superuser may change it; elsewhere the migration
-- leaves a notice and search stays correct, just slower on large tenants.
DO $$
BEGIN
  IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    ALTER FUNCTION pg_catalog.ts_match_vq(tsvector, tsquery) LEAKPROOF;
  ELSE
    RAISE NOTICE 'not a superuser: ts_match_vq stays non-leakproof; full-text search under RLS will not use its index';
  END IF;
END $$;
