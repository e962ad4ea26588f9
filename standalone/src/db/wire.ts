/**
 * The few pieces of PostgreSQL's frontend/backend protocol (version 3) that standalone's database
 * server reads or writes itself: splitting a client's byte stream into messages, and the backend
 * messages it answers with before (or instead of) the embedded database.
 */

/** The protocol version a StartupMessage carries (3.0). */
export const PROTOCOL_3 = 196_608;
/** Special startup-phase codes, sent in place of a protocol version. */
export const SSL_REQUEST = 80_877_103;
export const GSSENC_REQUEST = 80_877_104;
export const CANCEL_REQUEST = 80_877_102;

/** A startup-phase packet larger than this is not a real client (PostgreSQL allows 10,000 bytes). */
const MAX_STARTUP_BYTES = 10_000;

/** A frontend message: `type` is the message's first byte, or null for a startup-phase packet. */
export interface FrontendMessage {
  type: string | null;
  /** The whole message, type byte and length included (what the database is handed). */
  bytes: Buffer;
  /** The message's payload, after the type and length. */
  body: Buffer;
}

/**
 * Accumulates a client's bytes and hands out whole messages. In the startup phase messages have no
 * type byte (a length, then a code); afterwards every message is a type byte, then a length.
 */
export class MessageReader {
  private buffered: Buffer = Buffer.alloc(0);
  private startup = true;

  push(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
  }

  /** Called once the client's StartupMessage has been read: typed messages follow. */
  startupDone(): void {
    this.startup = false;
  }

  /** The next whole message, or null until more bytes arrive. Throws on a malformed length. */
  next(): FrontendMessage | null {
    const headerBytes = this.startup ? 4 : 5;
    if (this.buffered.length < headerBytes) return null;
    const length = this.buffered.readUInt32BE(headerBytes - 4);
    if (length < 4 || (this.startup && (length < 8 || length > MAX_STARTUP_BYTES))) throw new Error(`invalid message length ${length}`);
    const total = length + headerBytes - 4;
    if (this.buffered.length < total) return null;
    const bytes = this.buffered.subarray(0, total);
    this.buffered = this.buffered.subarray(total);
    return { type: this.startup ? null : String.fromCharCode(bytes[0]!), bytes, body: bytes.subarray(headerBytes) };
  }
}

/** A startup-phase packet's code: the protocol version, or one of the special requests. */
export function startupCode(message: FrontendMessage): number {
  return message.body.readUInt32BE(0);
}

/** The parameters (user, database, …) of a StartupMessage. */
export function startupParameters(message: FrontendMessage): Map<string, string> {
  const parts = message.body.subarray(4).toString("utf8").split("\0");
  const out = new Map<string, string>();
  for (let i = 0; i + 1 < parts.length && parts[i] !== ""; i += 2) out.set(parts[i]!, parts[i + 1]!);
  return out;
}

/** A typed message (either direction): its type byte, its length, its body. */
function typedMessage(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.write(type, 0, "latin1");
  header.writeUInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

/** AuthenticationCleartextPassword: asks the client for its password. */
export function cleartextPasswordRequest(): Buffer {
  const body = Buffer.alloc(4);
  body.writeUInt32BE(3, 0);
  return typedMessage("R", body);
}

/** The password of a PasswordMessage (a NUL-terminated string). */
export function passwordOf(message: FrontendMessage): string {
  const end = message.body.indexOf(0);
  return message.body.subarray(0, end === -1 ? message.body.length : end).toString("utf8");
}

/** An ErrorResponse with severity FATAL: the connection ends after it. */
export function fatalError(sqlState: string, text: string): Buffer {
  const fields = [`SFATAL`, `VFATAL`, `C${sqlState}`, `M${text}`].map((field) => `${field}\0`).join("");
  return typedMessage("E", Buffer.from(`${fields}\0`, "utf8"));
}

/** Frontend messages the server sends the database itself, to put its one session back to idle. */
export function sessionResetMessages(): Buffer {
  // CopyFail ends a COPY FROM STDIN that was left open (outside one the backend ignores it), Sync
  // ends an extended-protocol exchange left without one, and ROLLBACK ends a transaction block
  // (outside one it only warns).
  const cString = (text: string) => Buffer.from(`${text}\0`, "utf8");
  return Buffer.concat([typedMessage("f", cString("connection closed")), typedMessage("S", Buffer.alloc(0)), typedMessage("Q", cString("ROLLBACK"))]);
}

/**
 * The transaction status of the ReadyForQuery a backend reply ends with ('I' idle, 'T' in a
 * transaction, 'E' in a failed one), or null when the reply does not end with one (the backend
 * is in the middle of an exchange: after a Flush, or waiting for COPY data).
 */
export function endingTransactionStatus(reply: readonly Buffer[]): string | null {
  // The last six bytes, however the reply was cut into chunks.
  const last: Buffer[] = [];
  for (let i = reply.length - 1, wanted = 6; i >= 0 && wanted > 0; i--) {
    last.unshift(reply[i]!.subarray(-wanted));
    wanted -= last[0]!.length;
  }
  const tail = Buffer.concat(last);
  if (tail.length < 6 || tail[0] !== 0x5a || tail.readUInt32BE(1) !== 5) return null;
  return String.fromCharCode(tail[5]!);
}
