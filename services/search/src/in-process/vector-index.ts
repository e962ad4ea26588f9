import { fromVectorBinary, withTenant, type Pool, type Queryable } from "@3ngram/db";
import type { Logger } from "@3ngram/runtime";
import { Counter, type Registry } from "prom-client";
import type { Nomination, QueryVector, VectorSource } from "../db/candidates.js";
import {
  selectChangedSince,
  selectSnapshot,
  selectVectorPage,
  selectVectorsOf,
  type ChangedSince,
  type StoredVector,
  type VectorSet,
} from "../db/stored-vectors.js";
import { TenantVectors, type NearestScan } from "./tenant-vectors.js";

export interface VectorIndexOptions {
  pool: Pool;
  /** The read-only role the loads run as (RLS binds each to its tenant). */
  role: string;
  scan: NearestScan;
  /** Vectors held across all tenants; a tenant that would not fit is left to the database's index. */
  maxVectors: number;
  log: Logger;
  registry?: Registry | undefined;
}

/**
 * The leg nominates this many times the rows it keeps, so filters that turn some nominees away
 * (another type, an archived or superseded memory) still leave it full; when they turn away more,
 * the candidate statement falls back to the database's index (selectCandidates).
 */
const NOMINATION_FACTOR = 4;
/**
 * Vectors read per statement, while loading a tenant and while catching up on what changed, so
 * neither holds the database for long nor returns one large result (PGlite's WebAssembly memory,
 * which never shrinks, grows to hold it): in PGlite at 10,000 memories a page of 250 takes ~15 ms
 * (2,000: ~100 ms, which a search waiting behind it pays), and a whole load ~270 ms either way.
 */
const VECTOR_PAGE = 250;
/** After a tenant was found too large (or its load failed), how long before it is tried again. */
const RETRY_AFTER_MS = 10 * 60_000;

/** A search's nominations from the index: the ids nearest its query's vector, for a leg keeping `keep` rows. */
export type Nominate = (vector: QueryVector, keep: number) => Nomination | null;

/** One search's catch-up: the snapshot to read changes since, and what reads their vectors (in the search's transaction) and applies them. */
export interface CatchUp {
  since: string;
  finish(db: Queryable, changed: ChangedSince): Promise<Nominate | null>;
}

type Entry = { state: "ready"; vectors: TenantVectors } | { state: "loading"; done: Promise<void> } | { state: "refused"; until: number };

/**
 * Every tenant's stored vectors in this process, for an exact nearest-neighbour scan instead of
 * the approximate HNSW scan inside the database (docs/search.md, "The vector leg"). A tenant is
 * loaded in the background on its first search (that search, and any before the load ends, use
 * the database's index); each later search first applies what changed since the snapshot the
 * index is current for, inside its own transaction, so a memory written before a search began is
 * always a candidate. What the index answers is only a nomination: the candidate statement still
 * checks every nominated row against the search's filters and reads its cosine from the table.
 */
export class VectorIndex {
  private readonly entries = new Map<string, Entry>();
  private held = 0;
  private readonly legs: Counter<"source"> | undefined;

  constructor(private readonly options: VectorIndexOptions) {
    this.legs = options.registry
      ? new Counter({
          name: "threengram_search_vector_leg_total",
          help: "First relevance pages by where the vector leg's rows came from: the in-process index (memory) or the database's",
          labelNames: ["source"],
          registers: [options.registry],
        })
      : undefined;
  }

  /**
   * Begins bringing the set up to date for one search: the snapshot to read changes since
   * (vectorChangesStatement, read in the search's transaction), and what to do with them, which
   * answers the search's nominations. Null when this process does not hold the set yet (a load
   * starts unless one runs or the set was refused lately): the search uses the database's index.
   */
  catchUp(set: VectorSet): CatchUp | null {
    const key = keyOf(set);
    const entry = this.entries.get(key);
    if (entry?.state !== "ready") {
      if (entry === undefined || (entry.state === "refused" && Date.now() >= entry.until)) this.startLoad(key, set);
      return null;
    }
    const vectors = entry.vectors;
    const base = vectors.snapshot;
    return {
      since: base,
      finish: async (db, { snapshot, changedIds }) => {
        const changes: StoredVector[] = [];
        // A catch-up can span thousands of writes (standalone warms an empty index, then takes a bulk import).
        for (let at = 0; at < changedIds.length; at += VECTOR_PAGE) {
          changes.push(...(await selectVectorsOf(db, set, changedIds.slice(at, at + VECTOR_PAGE))));
        }
        // Two searches may catch up from the same snapshot at once: the first to finish applies its
        // changes and moves the snapshot; the other leaves the index as it finds it. That one may
        // have read later than the first (a memory committed between their reads), so it answers
        // from the index only when everything it read is already there (an added vector held, a
        // removed one gone), and otherwise from the database's index, which its transaction sees.
        if (vectors.snapshot !== base && !changes.every((c) => (c.vector === null ? !vectors.has(c.id) : vectors.has(c.id)))) return null;
        if (vectors.snapshot === base && this.entries.get(key) === entry) {
          const before = vectors.size;
          for (const change of changes) {
            if (change.vector === null) vectors.delete(change.id);
            else vectors.set(change.id, change.vector);
          }
          vectors.snapshot = snapshot;
          this.held += vectors.size - before;
          if (vectors.size > this.options.maxVectors) {
            this.refuse(key, vectors.size);
            return null;
          }
          // Most recently used last, so an eviction takes the tenant searched least recently.
          this.entries.delete(key);
          this.entries.set(key, entry);
          this.evictBeyondLimit(key);
        }
        if (this.entries.get(key) !== entry) return null;
        return (vector, keep) => {
          if (vector.model !== set.model || vector.dimensions !== set.dimensions) return null;
          const want = keep * NOMINATION_FACTOR;
          return { ids: vectors.nearest(fromVectorBinary(vector.binary), want, this.options.scan), complete: want >= vectors.size };
        };
      },
    };
  }

  /** catchUp with the changes read on their own in the caller's transaction (a search folds that read into its first statement). */
  async current(db: Queryable, set: VectorSet): Promise<Nominate | null> {
    const catchUp = this.catchUp(set);
    return catchUp ? catchUp.finish(db, await selectChangedSince(db, set.tenantId, catchUp.since)) : null;
  }

  /** Counts a first page by where its vector leg's rows came from. */
  recordLeg(source: VectorSource): void {
    if (source !== null) this.legs?.inc({ source });
  }

  /**
   * Loads the set now unless it is held or was refused lately, and answers once that is settled:
   * whether its searches will use this index. (A search never waits for a load: this is for
   * warming a tenant ahead of its searches, and for tests.)
   */
  async warm(set: VectorSet): Promise<boolean> {
    const key = keyOf(set);
    let entry = this.entries.get(key);
    if (entry === undefined || (entry.state === "refused" && Date.now() >= entry.until)) entry = this.startLoad(key, set);
    if (entry.state === "loading") await entry.done;
    return this.entries.get(key)?.state === "ready";
  }

  /** Vectors held now, across tenants. */
  get size(): number {
    return this.held;
  }

  private startLoad(key: string, set: VectorSet): Entry {
    const done = this.load(set).then(
      (vectors) => {
        if (this.entries.get(key) !== entry) return;
        if (vectors === null) return this.refuse(key, 0);
        this.entries.set(key, { state: "ready", vectors });
        this.held += vectors.size;
        this.evictBeyondLimit(key);
      },
      (err: unknown) => {
        if (this.entries.get(key) !== entry) return;
        this.entries.set(key, { state: "refused", until: Date.now() + RETRY_AFTER_MS / 10 });
        this.options.log.warn({ error: (err as Error).name }, "loading the in-process vector index failed; searches use the database's index");
      },
    );
    const entry: Entry = { state: "loading", done };
    this.entries.set(key, entry);
    return entry;
  }

  /**
   * The set's vectors, read page by page in short transactions, or null when there are more than
   * the index may hold. The snapshot is taken before the first page, so whatever changes while the
   * pages are read is applied again by the first catch-up (applying a change twice is harmless).
   */
  private async load(set: VectorSet): Promise<TenantVectors | null> {
    const { pool, role } = this.options;
    const scope = { role, tenantId: set.tenantId, readOnly: true };
    const snapshot = await withTenant(pool, scope, (db) => selectSnapshot(db));
    const vectors = new TenantVectors(set.dimensions, snapshot);
    const room = this.options.maxVectors;
    let after: string | null = null;
    for (;;) {
      const page = await withTenant(pool, scope, (db) => selectVectorPage(db, set, after, VECTOR_PAGE));
      for (const row of page) vectors.set(row.id, row.vector);
      if (vectors.size > room) return null;
      if (page.length < VECTOR_PAGE) return vectors;
      after = page[page.length - 1]!.id;
    }
  }

  /** Gives a tenant that outgrew the index back to the database's index for a while. */
  private refuse(key: string, held: number): void {
    this.held -= held;
    this.entries.set(key, { state: "refused", until: Date.now() + RETRY_AFTER_MS });
    this.options.log.warn(
      { maxVectors: this.options.maxVectors },
      "a tenant has more vectors than the in-process index holds; its searches use the database's index",
    );
  }

  /** Drops the least recently searched tenants (never `keep`) until the index is within its bound. */
  private evictBeyondLimit(keep: string): void {
    for (const [key, entry] of this.entries) {
      if (this.held <= this.options.maxVectors) return;
      if (key === keep || entry.state !== "ready") continue;
      this.entries.delete(key);
      this.held -= entry.vectors.size;
    }
  }
}

function keyOf(set: VectorSet): string {
  return `${set.tenantId}\u0000${set.model}\u0000${set.dimensions}`;
}
