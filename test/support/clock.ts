import { expect } from "vitest";
import type { Pool } from "@3ngram/db";

/**
 * Polls the database's own clock until it is 3 ms past `instant` (an ISO string or epoch ms), so
 * the next write is recorded at least 2 ms later. Time-travel tests use the server's clock, never
 * the test's, because recorded_at comes from PostgreSQL.
 */
export async function waitPastOnServer(pool: Pool, instant: string | number): Promise<void> {
  const target = (typeof instant === "number" ? instant : Date.parse(instant)) + 3;
  for (;;) {
    const { rows } = await pool.query<{ now: Date }>("SELECT clock_timestamp() AS now");
    if (rows[0]!.now.getTime() >= target) return;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** An ISO instant strictly between two recorded (millisecond-cut) instants. */
export function instantBetween(earlier: string, later: string): string {
  const a = Date.parse(earlier);
  const b = Date.parse(later);
  expect(b - a).toBeGreaterThanOrEqual(2);
  return new Date(Math.floor((a + b) / 2)).toISOString();
}
