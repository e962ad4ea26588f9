import { createPool } from "@3ngram/db";
import type { Logger } from "@3ngram/runtime";

/**
 * What autovacuum and the checkpointer do for a PostgreSQL server, done for the embedded one.
 *
 * PGlite is a single-user backend: no autovacuum, no checkpointer. Left alone, the planner keeps
 * the statistics of the empty tables it was created with (a full-text probe priced as dearer than
 * scanning the tenant), the GIN indexes' pending lists grow until they reach
 * gin_pending_list_limit (4 MB: every full-text probe reads the whole list), and the write-ahead
 * log is only checkpointed when it reaches max_wal_size, inside whichever write crosses it. So, on
 * a timer:
 * - every table whose size on disk has moved by more than a tenth (and a few pages) from what its
 *   last ANALYZE recorded in pg_class gets ANALYZE: autovacuum's trigger, read from sizes so that
 *   nothing is scanned to decide;
 * - every GIN index's pending list is merged into the index (gin_clean_pending_list). A manual
 *   ANALYZE does not do that — only autovacuum's does — and an empty list costs one metapage read;
 * - a CHECKPOINT every few minutes when WAL has been written, so restart recovery stays short and
 *   no request pays for it.
 * It connects like any client (as the superuser, over the Unix socket). It uses only statements
 * that are valid inside a transaction (ANALYZE, a function call, CHECKPOINT; not VACUUM): the socket
 * server it was written against (pglite-socket) could run a message of one connection inside
 * another's unfinished extended-protocol statement. The shared session that replaced it keeps
 * exchanges whole (docs/adr/0041), but the restriction costs nothing and stays.
 */
export interface UpkeepOptions {
  /** Superuser URL of the embedded database. */
  databaseUrl: string;
  log: Logger;
  /** How often to look (default 10 s). */
  intervalMs?: number;
  /** How often at most to checkpoint (default 5 min). */
  checkpointMs?: number;
}

/** What one round did. */
export interface UpkeepRound {
  /** The tables analysed. */
  analysed: string[];
  /** Pending-list pages merged into the GIN indexes. */
  mergedPages: number;
}

export interface Upkeep {
  /** One round now. */
  runOnce(options?: { checkpoint?: boolean }): Promise<UpkeepRound>;
  close(): Promise<void>;
}

/** A table is stale once its pages differ from the analysed count by this share… */
const STALE_FRACTION = 0.1;
/** …and by at least this many pages (small tables are cheap to plan either way). */
const STALE_MIN_PAGES = 8;
/** WAL written since the last checkpoint; below this a checkpoint has nothing worth flushing. */
const CHECKPOINT_MIN_WAL_BYTES = 64 * 1024;
/** One row: the stale tables (quoted where needed) and the WAL bytes since the last checkpoint. */
const SURVEY = `
  SELECT coalesce((
      SELECT string_agg(c.oid::regclass::text, ', ')
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind = 'r' AND n.nspname = 'public'
        AND abs(pg_relation_size(c.oid) / current_setting('block_size')::int - greatest(c.relpages, 0))
            > greatest(${STALE_MIN_PAGES}, ${STALE_FRACTION} * greatest(c.relpages, 0))), '') AS stale,
    pg_wal_lsn_diff(pg_current_wal_lsn(), (pg_control_checkpoint()).redo_lsn)::float8 AS wal_bytes`;
/** Merges every GIN index's pending list; answers the pages merged. */
const MERGE_PENDING_LISTS = `
  SELECT coalesce(sum(gin_clean_pending_list(c.oid)), 0)::int AS pages
  FROM pg_class c
  JOIN pg_am am ON am.oid = c.relam
  JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE c.relkind = 'i' AND am.amname = 'gin' AND n.nspname = 'public'`;

export function startUpkeep(options: UpkeepOptions): Upkeep {
  const pool = createPool({ connectionString: options.databaseUrl, max: 1, applicationName: "standalone-upkeep" });
  const checkpointMs = options.checkpointMs ?? 5 * 60_000;
  let lastCheckpoint = Date.now();
  let running: Promise<unknown> = Promise.resolve();

  const round = async (checkpoint: boolean): Promise<UpkeepRound> => {
    const survey = (await pool.query<{ stale: string; wal_bytes: number }>(SURVEY)).rows[0]!;
    if (survey.stale) await pool.query(`ANALYZE ${survey.stale}`);
    const merged = (await pool.query<{ pages: number }>(MERGE_PENDING_LISTS)).rows[0]!;
    if (checkpoint || Date.now() - lastCheckpoint >= checkpointMs) {
      if (checkpoint || survey.wal_bytes > CHECKPOINT_MIN_WAL_BYTES) await pool.query("CHECKPOINT");
      lastCheckpoint = Date.now();
    }
    return { analysed: survey.stale ? survey.stale.split(", ") : [], mergedPages: merged.pages };
  };
  const runOnce = (opts: { checkpoint?: boolean } = {}) => {
    // One round at a time.
    const next = running.catch(() => {}).then(() => round(opts.checkpoint ?? false));
    running = next;
    return next;
  };
  const timer = setInterval(() => {
    runOnce().then(
      ({ analysed, mergedPages }) =>
        (analysed.length > 0 || mergedPages > 0) && options.log.debug({ tables: analysed, mergedPages }, "refreshed planner statistics and full-text indexes"),
      // A failed round is not a reason to stop the server; the next round tries again.
      (err: unknown) => options.log.warn({ error: (err as Error).name, code: (err as { code?: string }).code }, "database upkeep round failed"),
    );
  }, options.intervalMs ?? 10_000);
  timer.unref();
  return {
    runOnce,
    async close() {
      clearInterval(timer);
      await running.catch(() => {});
      await pool.end();
    },
  };
}
