/**
 * mem0 memories for the import tests, written by hand from mem0's documented OSS format: the
 * `MemoryItem` its `Memory.get_all` returns (`id`, `memory`, `hash`, `created_at`, `updated_at`,
 * the promoted `user_id` / `agent_id` / `run_id`, and `metadata` for whatever else was stored)
 * inside `{ "results": [...] }`, with times as its store writes them (a UTC offset, microseconds).
 * They carry what mem0 stores only when asked (categories, metadata types, odd times and bad
 * lines); what mem0 itself writes is test/fixtures/mem0/get_all.ndjson (import-fixtures.ts).
 */

/** Stored once each; a second import finds them all. */
export const MEM0_MEMORIES = [
  {
    id: "8d3b6a2e-5f0c-4e1a-9b7d-1c2e3f4a5b6c",
    memory: "Prefers green tea over coffee in the afternoon",
    hash: "3f1c9e0b7a5d2c4e6f8a0b1c2d3e4f5a",
    metadata: null,
    user_id: "alice",
    categories: ["food", "habits"],
    created_at: "2024-07-20T01:23:45.123456-07:00",
    updated_at: "2024-07-21T09:00:00.000000-07:00",
  },
  {
    id: "1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b",
    memory: "Chose PostgreSQL for the atlas ledger because it needs transactions",
    hash: "a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5",
    metadata: { type: "decision", topic: "atlas ledger", tags: ["atlas", "  ", "databases"] },
    agent_id: "planner",
    run_id: "run-42",
    created_at: "2025-02-03T10:00:00+00:00",
    updated_at: "2025-02-03T10:00:00+00:00",
  },
  {
    id: "0a9b8c7d-6e5f-4a3b-2c1d-0e9f8a7b6c5d",
    memory: "To deploy, run the release script and then tag the commit",
    hash: "5d4c3b2a1f0e9d8c7b6a5f4e3d2c1b0a",
    metadata: { memory_type: "procedural_memory" },
    agent_id: "deployer",
    created_at: "2025-03-01T12:30:00.5Z",
    updated_at: null,
  },
];

/** One line each that cannot be mapped, and the field its error names. */
export const MEM0_UNMAPPABLE = [
  { record: { id: "empty-text", memory: "   ", created_at: "2025-01-01T00:00:00Z" }, field: "content" },
  { record: { id: "bad-date", memory: "Met the auditors", created_at: "last Tuesday" }, field: "created_at" },
  { record: { id: "no-zone", memory: "Shipped version two", created_at: "2025-01-01T00:00:00" }, field: "created_at" },
  { record: { memory: "A memory without an id" }, field: "id" },
];
