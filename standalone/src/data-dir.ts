import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * PGlite has no lock between processes, and two owners of one data directory would corrupt it.
 * A pid file makes the second `make run` fail clearly instead; a stale file from a crashed run
 * (its pid no longer alive) is taken over.
 */
export function lockDataDir(dir: string): () => void {
  mkdirSync(dir, { recursive: true });
  const lockPath = join(dir, "standalone.pid");
  try {
    const pid = Number(readFileSync(lockPath, "utf8").trim());
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
      throw new Error(`data directory ${dir} is in use by process ${pid}; stop it first`);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  writeFileSync(lockPath, String(process.pid));
  return () => rmSync(lockPath, { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

export interface StandaloneIdentity {
  tenantId: string;
  userId: string;
  apiKey: string;
}

/**
 * The standalone owner's API key, kept in the data directory (mode 0600) so every start can print
 * it. This is the user's own machine and own data; a server deployment never stores keys in clear.
 */
export function readIdentity(dir: string): StandaloneIdentity | null {
  try {
    return JSON.parse(readFileSync(join(dir, "standalone.json"), "utf8")) as StandaloneIdentity;
  } catch {
    return null;
  }
}

export function writeIdentity(dir: string, identity: StandaloneIdentity): void {
  writeFileSync(join(dir, "standalone.json"), JSON.stringify(identity, null, 2), { mode: 0o600 });
}

/**
 * The password of the tool port (`--db-port`), generated on first use and kept in the data
 * directory (mode 0600) so tools can be configured once.
 */
export function readOrCreateDbPassword(dir: string): { password: string; file: string } {
  const file = join(dir, "db-password");
  try {
    const password = readFileSync(file, "utf8").trim();
    if (password.length >= 16) return { password, file };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  const password = randomBytes(24).toString("base64url");
  writeFileSync(file, `${password}\n`, { mode: 0o600 });
  // writeFileSync's mode applies only to a file it creates; one too short to use was there already.
  chmodSync(file, 0o600);
  return { password, file };
}

/**
 * The database's socket URL, written while the server runs so that the operator commands find it
 * from the data directory alone (services/memory/src/cli.ts reads this file by the same name).
 */
export function writeDatabaseUrl(dir: string, url: string): () => void {
  const file = join(dir, "database.url");
  writeFileSync(file, `${url}\n`, { mode: 0o600 });
  return () => rmSync(file, { force: true });
}
