/**
 * The transaction-local switch the cross-tenant housekeeping policies test (job_outbox in
 * migration 0006, idempotency_keys in 0007). Only the memory service's background loops set it.
 */
export const HOUSEKEEPING_SETTINGS = { "app.housekeeping": "on" } as const;
