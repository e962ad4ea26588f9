import { Buffer } from "node:buffer";
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * The socket's file name: what node-postgres and libpq look for in a socket directory when the URL
 * names no port (5432), so the URL needs none.
 */
const SOCKET_FILE = ".s.PGSQL.5432";

/**
 * A Unix socket's path must fit sun_path: 107 bytes on Linux, 103 on macOS. The smaller one, so a
 * data directory that works on one works on the other.
 */
const MAX_SOCKET_PATH_BYTES = 103;

export interface SocketDir {
  /** The directory (mode 0700) holding the socket. */
  dir: string;
  /** The socket's path. */
  path: string;
  /** True when the preferred directory's path was too long and a temporary one is used instead. */
  temporary: boolean;
  /** Removes the socket (and a temporary directory). */
  remove(): void;
}

/**
 * The directory the database's Unix socket goes in: `preferred` (created 0700 if missing, made
 * 0700 if not), or, when that would make the socket's path too long for the operating system or
 * none is preferred, a fresh 0700 directory under the temporary directory. Only the owner can
 * reach a socket in a 0700 directory, whatever the socket's own mode.
 */
export function prepareSocketDir(preferred: string | undefined): SocketDir {
  if (preferred !== undefined && Buffer.byteLength(join(preferred, SOCKET_FILE)) <= MAX_SOCKET_PATH_BYTES) {
    ensurePrivateDir(preferred);
    const path = join(preferred, SOCKET_FILE);
    // A socket left by a run that crashed: this process holds the data directory's lock, so it is stale.
    rmSync(path, { force: true });
    return { dir: preferred, path, temporary: false, remove: () => rmSync(path, { force: true }) };
  }
  // mkdtemp creates the directory with mode 0700.
  const dir = mkdtempSync(join(tmpdir(), "3ngram-db-"));
  const path = join(dir, SOCKET_FILE);
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`the temporary directory ${tmpdir()} is too long a path for the database's Unix socket; set TMPDIR to a shorter one`);
  }
  return { dir, path, temporary: preferred !== undefined, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The socket's URL: the directory, percent-encoded, as the host (a host that starts with "/" is a
 * socket directory to node-postgres and libpq alike), no port, no password.
 */
export function socketUrl(dir: string): string {
  return `postgres://postgres@${encodeURIComponent(dir)}/postgres`;
}

function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = lstatSync(dir);
  // A symbolic link could lead the socket somewhere other users can reach.
  if (!stat.isDirectory()) throw new Error(`${dir} must be a directory for the database's socket`);
  if (process.getuid !== undefined && stat.uid !== process.getuid()) throw new Error(`${dir} belongs to another user; the database's socket cannot go there`);
  chmodSync(dir, 0o700);
}
