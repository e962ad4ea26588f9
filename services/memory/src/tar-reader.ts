/**
 * The regular files of a tar archive (optionally gzip-compressed) that a caller wants, as the
 * operator CLI's import reads a packed basic-memory folder. The archive is read as a stream by
 * tar-stream (ustar, GNU long names and pax headers, as tar, GNU tar and bsdtar write them), so
 * only the files kept are held in memory; links, devices, directories and unwanted files are
 * passed over unread.
 */
import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { extract } from "tar-stream";

export interface TarFile {
  path: string;
  content: Buffer;
}

/** Refuses to keep more than this: a folder of notes is far smaller, a compression bomb is not. */
const MAX_KEPT_BYTES = 1024 * 1024 * 1024;

/** The files of the archive at `path` whose names `keep` accepts, in archive order. */
export async function readTarFiles(path: string, keep: (name: string) => boolean): Promise<TarFile[]> {
  const unpack = extract();
  const source = createReadStream(path);
  const unpacking = (await isGzip(path)) ? pipeline(source, createGunzip(), unpack) : pipeline(source, unpack);
  // Its failure also ends the loop below, which reports it; this keeps it from counting as unhandled meanwhile.
  unpacking.catch(() => undefined);
  const files: TarFile[] = [];
  let kept = 0;
  try {
    for await (const entry of unpack) {
      if (entry.header.type !== "file" || !keep(entry.header.name)) {
        entry.resume();
        continue;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of entry) {
        kept += (chunk as Buffer).length;
        if (kept > MAX_KEPT_BYTES) throw new Error(`the tar archive holds more than ${MAX_KEPT_BYTES} bytes of notes`);
        chunks.push(chunk as Buffer);
      }
      files.push({ path: entry.header.name, content: Buffer.concat(chunks) });
    }
    await unpacking;
  } catch (err) {
    source.destroy();
    throw new Error(`not a tar archive that can be read: ${(err as Error).message}`, { cause: err });
  }
  return files;
}

/** gzip's two magic bytes at the start of the file. */
async function isGzip(path: string): Promise<boolean> {
  const file = await open(path);
  try {
    const { bytesRead, buffer } = await file.read(Buffer.alloc(2), 0, 2, 0);
    return bytesRead === 2 && buffer[0] === 0x1f && buffer[1] === 0x8b;
  } finally {
    await file.close();
  }
}
