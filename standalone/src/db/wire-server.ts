import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type Server, type Socket } from "node:net";
import type { ClientKind, SessionClient, SharedSession } from "./shared-session.js";
import {
  CANCEL_REQUEST,
  GSSENC_REQUEST,
  MessageReader,
  PROTOCOL_3,
  SSL_REQUEST,
  cleartextPasswordRequest,
  fatalError,
  passwordOf,
  startupCode,
  startupParameters,
  type FrontendMessage,
} from "./wire.js";

export interface WireListenerOptions {
  kind: ClientKind;
  /**
   * Asked of every client before it reaches the database (PostgreSQL's cleartext password
   * exchange: the tool port is on loopback, where nobody but root sees the bytes). None on the
   * Unix socket, which the file system keeps to the owner.
   */
  password?: string | undefined;
  maxConnections: number;
  /** Bytes a client may send without ending an exchange (a Sync, Query or Flush). */
  maxUnitBytes: number;
}

/** How long a new connection has to get through startup (and the password). */
const STARTUP_TIMEOUT_MS = 10_000;

/** Messages after which a client waits for the database's answer: the end of one exchange. */
const UNIT_ENDS = new Set(["S", "Q", "H"]);

/**
 * A listener speaking PostgreSQL's protocol in front of the shared session: it reads each
 * connection's startup (answering SSL and GSS encryption requests with "no", dropping cancel
 * requests, which one backend cannot honour), asks for the password where there is one, and then
 * hands the session whole exchanges, never single messages.
 */
export interface WireListener {
  server: Server;
  /** Stops listening and ends every connection (the session is going away). */
  close(): Promise<void>;
}

export function createWireListener(session: SharedSession, options: WireListenerOptions): WireListener {
  const open = new Set<Socket>();
  const server = createServer((socket) => {
    if (open.size >= options.maxConnections) {
      socket.end(fatalError("53300", "too many connections to the embedded database"));
      return;
    }
    open.add(socket);
    socket.once("close", () => open.delete(socket));
    serveConnection(socket, session, options);
  });
  return {
    server,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        // Not listening (it never started) is as good as closed.
        server.close(() => resolve());
      }),
  };
}

function serveConnection(socket: Socket, session: SharedSession, options: WireListenerOptions): void {
  socket.setNoDelay(true);
  const reader = new MessageReader();
  const client: SessionClient = {
    kind: options.kind,
    write: (chunk) => {
      if (socket.writable) socket.write(chunk);
    },
    abort: (lastMessage) => {
      if (socket.writable) socket.end(lastMessage);
      socket.destroy();
    },
  };
  let phase: "startup" | "password" | "session" = "startup";
  let startup: FrontendMessage | null = null;
  let unit: Buffer[] = [];
  let unitBytes = 0;
  const startupTimer = setTimeout(() => socket.destroy(), STARTUP_TIMEOUT_MS);
  const refuse = (sqlState: string, text: string) => {
    client.abort(fatalError(sqlState, text));
  };
  const enterSession = () => {
    clearTimeout(startupTimer);
    phase = "session";
    session.submit(client, Buffer.from(startup!.bytes));
  };

  const handle = (message: FrontendMessage): boolean => {
    if (phase === "startup") {
      const code = startupCode(message);
      if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
        socket.write("N");
        return true;
      }
      if (code === CANCEL_REQUEST) {
        socket.destroy();
        return false;
      }
      if (code !== PROTOCOL_3) {
        refuse("08P01", "unsupported frontend protocol");
        return false;
      }
      startup = message;
      reader.startupDone();
      if (options.password === undefined) {
        enterSession();
      } else {
        phase = "password";
        socket.write(cleartextPasswordRequest());
      }
      return true;
    }
    if (phase === "password") {
      if (message.type !== "p" || !samePassword(passwordOf(message), options.password!)) {
        const user = startupParameters(startup!).get("user") ?? "";
        refuse("28P01", `password authentication failed for user "${user}"`);
        return false;
      }
      enterSession();
      return true;
    }
    if (message.type === "X") {
      socket.end();
      return false;
    }
    unit.push(Buffer.from(message.bytes));
    unitBytes += message.bytes.length;
    if (UNIT_ENDS.has(message.type!)) {
      session.submit(client, Buffer.concat(unit));
      unit = [];
      unitBytes = 0;
    } else if (unitBytes > options.maxUnitBytes) {
      refuse("54000", `more than ${options.maxUnitBytes} bytes sent without a Sync`);
      return false;
    }
    return true;
  };

  socket.on("data", (chunk) => {
    reader.push(chunk);
    try {
      for (let message = reader.next(); message; message = reader.next()) if (!handle(message)) return;
    } catch (err) {
      refuse("08P01", (err as Error).message);
    }
  });
  socket.on("error", () => {});
  socket.once("close", () => {
    clearTimeout(startupTimer);
    session.detach(client);
  });
}

/** Compares digests, so the time taken says nothing about how much of the password was right. */
function samePassword(given: string, expected: string): boolean {
  const digest = (text: string) => createHash("sha256").update(text, "utf8").digest();
  return timingSafeEqual(digest(given), digest(expected));
}
