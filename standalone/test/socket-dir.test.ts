/** Where the database's Unix socket goes: in the data directory, or, when that path is too long for a socket, a private temporary directory. */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { prepareSocketDir, socketUrl } from "../src/db/socket-dir.js";

const root = mkdtempSync(join(tmpdir(), "3ngram-socket-dir-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("the database socket's directory", () => {
  it("is the preferred directory, created or narrowed to 0700", () => {
    const dir = join(root, "run");
    const socket = prepareSocketDir(dir);
    expect(socket).toMatchObject({ dir, path: join(dir, ".s.PGSQL.5432"), temporary: false });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  it("falls back to a private temporary directory when the socket's path would be too long", () => {
    const long = join(root, "d".repeat(120), "run");
    const socket = prepareSocketDir(long);
    expect(socket.temporary).toBe(true);
    expect(socket.dir.startsWith(tmpdir())).toBe(true);
    expect(Buffer.byteLength(socket.path)).toBeLessThanOrEqual(103);
    expect(statSync(socket.dir).mode & 0o777).toBe(0o700);
    socket.remove();
    expect(() => statSync(socket.dir)).toThrow();
  });

  it("names the directory as the URL's host, encoded, with no port", () => {
    const url = socketUrl("/tmp/a dir/run");
    expect(url).toBe("postgres://postgres@%2Ftmp%2Fa%20dir%2Frun/postgres");
    expect(new URL(url).port).toBe("");
  });
});
