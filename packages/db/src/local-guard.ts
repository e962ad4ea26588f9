/** Tests create and drop databases: refuse anything that is not on this machine. */
export function assertLocalDatabaseUrl(url: string): void {
  const host = new URL(url).hostname;
  if (!["127.0.0.1", "localhost", "::1", "[::1]"].includes(host)) {
    throw new Error(`refusing to run tests against a non-local database (${host})`);
  }
}
