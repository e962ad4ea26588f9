/**
 * A TCP relay in front of the real test database, for tests that need the server to say something
 * it says only in rare moments (a shutdown as a connection opens, an answer that is late). Bytes
 * from the client pass as they are; what the server sends goes through the test's handler, one
 * handler per relayed connection.
 */
import net from "node:net";

export interface RelayedConnection {
  /** The client's side: what the handler writes here reaches node-postgres. */
  client: net.Socket;
  /** The server's side. */
  server: net.Socket;
}

export interface PgRelay {
  /** The database URL through the relay. */
  url: string;
  close(): Promise<void>;
}

/** Relays to the database at `databaseUrl`; `relayConnection` makes each connection's handler of the server's bytes. */
export async function startPgRelay(databaseUrl: string, relayConnection: (connection: RelayedConnection) => (chunk: Buffer) => void): Promise<PgRelay> {
  const upstream = new URL(databaseUrl);
  const sockets = new Set<net.Socket>();
  const relay = net.createServer((client) => {
    const server = net.connect(Number(upstream.port || 5432), upstream.hostname);
    sockets.add(client).add(server);
    client.on("error", () => server.destroy());
    server.on("error", () => client.destroy());
    client.pipe(server);
    server.on("data", relayConnection({ client, server }));
  });
  await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
  const url = new URL(databaseUrl);
  url.hostname = "127.0.0.1";
  url.port = String((relay.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        relay.close(() => resolve());
      }),
  };
}

/** The end of the first whole backend message at or after `at` (type byte, then a length that counts itself), or undefined while it is incomplete. */
export function messageEnd(buffer: Buffer, at: number): number | undefined {
  if (buffer.length < at + 5) return undefined;
  const end = at + 1 + buffer.readInt32BE(at + 1);
  return buffer.length < end ? undefined : end;
}
