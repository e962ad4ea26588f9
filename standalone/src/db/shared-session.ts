import type { PGlite } from "@electric-sql/pglite";
import { endingTransactionStatus, fatalError, sessionResetMessages } from "./wire.js";

/**
 * Who a connection is: `local` came through the Unix socket (the services, and the owner's own
 * commands: the file system already limits it to the owner), `tool` through the password-guarded
 * TCP port that `--db-port` opens.
 */
export type ClientKind = "local" | "tool";

/** One client connection, as the session sees it. */
export interface SessionClient {
  readonly kind: ClientKind;
  /** Sends part of the database's reply to the client. */
  write(chunk: Buffer): void;
  /** Sends the client a last message and ends its connection. */
  abort(lastMessage: Buffer): void;
}

/** What a tool may do with the session between its exchanges (docs/adr/0041). */
export interface SessionLimits {
  /** How long a tool's open transaction (or unfinished exchange) may wait for its next message. */
  toolIdleMs: number;
  /** How long in all a tool may keep the session to itself. */
  toolHoldMs: number;
}

interface ClientState {
  client: SessionClient;
  /** Exchanges received and not yet run, oldest first. */
  units: Buffer[];
  closed: boolean;
  /** A tool's allowances while it keeps the session (SessionLimits). */
  idleTimer?: NodeJS.Timeout | undefined;
  holdTimer?: NodeJS.Timeout | undefined;
}

/**
 * PGlite is ONE PostgreSQL backend: one session, one unnamed statement, one transaction at a time,
 * shared by every connection. So connections take turns by whole exchanges, never by single
 * messages: a unit is everything a client sends up to and including a Sync, a simple Query or a
 * Flush, and it runs to its end before anyone else's. A client whose unit leaves the backend
 * anywhere but idle (inside a transaction, after a Flush, in a COPY) keeps the session until an
 * exchange of its own ends idle, and a client that goes away while keeping it has its leftovers
 * rolled back. Interleaving single messages (what pglite-socket did) let one client's Parse land
 * between another's Parse and Bind: "unnamed prepared statement does not exist", and under load
 * a stalled backend.
 *
 * Turns go round: every waiting connection runs one unit before any runs a second, and tool
 * connections, all of them together, get at most every other turn, so a tool hammering the port
 * can halve the services' share of the database and never take it. A tool may keep the session
 * only briefly (SessionLimits); past that it is disconnected and its transaction rolled back.
 */
export class SharedSession {
  private readonly states = new Map<SessionClient, ClientState>();
  private readonly waiting: Record<ClientKind, Set<ClientState>> = { local: new Set(), tool: new Set() };
  private owner: ClientState | null = null;
  private lastTurnWasTool = false;
  private pumping: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly db: PGlite,
    private readonly limits: SessionLimits,
  ) {}

  /** Queues one unit of a client's messages (ending with a Sync, a Query or a Flush, or a StartupMessage). */
  submit(client: SessionClient, unit: Buffer): void {
    if (this.closed) return;
    let state = this.states.get(client);
    if (!state) {
      state = { client, units: [], closed: false };
      this.states.set(client, state);
    }
    state.units.push(unit);
    if (state === this.owner) {
      clearTimeout(state.idleTimer);
      state.idleTimer = undefined;
    } else this.waiting[client.kind].add(state);
    this.pump();
  }

  /** The client has gone: its queued units are dropped, and what it left open in the session is rolled back. */
  detach(client: SessionClient): void {
    const state = this.states.get(client);
    if (!state) return;
    this.states.delete(client);
    state.closed = true;
    state.units.length = 0;
    clearTimers(state);
    this.waiting[client.kind].delete(state);
    this.pump();
  }

  /** Stops taking units and waits for the one running. */
  async close(): Promise<void> {
    this.closed = true;
    for (const state of this.states.values()) clearTimers(state);
    await this.pumping;
  }

  private pump(): void {
    if (this.pumping || this.closed) return;
    this.pumping = this.drain().finally(() => {
      this.pumping = null;
    });
  }

  private async drain(): Promise<void> {
    for (;;) {
      if (this.closed) return;
      if (this.owner?.closed) {
        this.owner = null;
        await this.run(sessionResetMessages(), () => {});
        continue;
      }
      const next = this.pick();
      if (!next) break;
      const reply: Buffer[] = [];
      try {
        await this.run(next.units.shift()!, (chunk) => {
          reply.push(chunk);
          if (!next.closed) next.client.write(chunk);
        });
      } catch {
        // The database itself failed (it is closing): nothing more can be answered on this connection.
        next.client.abort(fatalError("57P01", "the embedded database is shutting down"));
        this.detach(next.client);
        continue;
      }
      this.afterUnit(next, endingTransactionStatus(reply) === "I");
    }
    // The owner has nothing queued: a tool's idle allowance starts now.
    const owner = this.owner;
    if (owner && owner.client.kind === "tool" && owner.idleTimer === undefined) {
      owner.idleTimer = this.expelLater(owner, this.limits.toolIdleMs, "the transaction stayed idle");
    }
  }

  /** The owner while there is one; otherwise the next connection in turn. */
  private pick(): ClientState | null {
    if (this.owner) return this.owner.units.length > 0 ? this.owner : null;
    const tools = this.waiting.tool.size > 0 && (this.waiting.local.size === 0 || !this.lastTurnWasTool);
    const queue = this.waiting[tools ? "tool" : "local"];
    const first = queue.values().next();
    if (first.done) return null;
    queue.delete(first.value);
    this.lastTurnWasTool = tools;
    return first.value;
  }

  private afterUnit(state: ClientState, idle: boolean): void {
    if (idle && this.owner === state) {
      this.owner = null;
      clearTimers(state);
    } else if (!idle && this.owner !== state) {
      this.owner = state;
      if (state.client.kind === "tool") state.holdTimer = this.expelLater(state, this.limits.toolHoldMs, "the session was held");
    }
    // Back in line behind everyone waiting (an owner is served directly and never waits in line).
    if (this.owner !== state && !state.closed && state.units.length > 0) this.waiting[state.client.kind].add(state);
  }

  /** Disconnects a tool that still keeps the session after ms (and rolls back what it left open). */
  private expelLater(state: ClientState, ms: number, what: string): NodeJS.Timeout {
    return setTimeout(() => {
      if (this.owner !== state || state.closed) return;
      state.client.abort(fatalError("25P03", `terminating the tool connection: ${what} longer than ${ms} ms on the shared embedded database`));
      this.detach(state.client);
    }, ms);
  }

  private async run(unit: Buffer, onReply: (chunk: Buffer) => void): Promise<void> {
    await this.db.runExclusive(() => this.db.execProtocolRawStream(unit, { onRawData: (data) => onReply(Buffer.from(data)) }));
  }
}

function clearTimers(state: ClientState): void {
  clearTimeout(state.idleTimer);
  clearTimeout(state.holdTimer);
  state.idleTimer = state.holdTimer = undefined;
}
