/**
 * A bounded write + search load for fault tests, through the gateway as real clients use it: REST
 * writers and searchers with plain fetch, and MCP ones with the official client. Clients do not
 * retry; every answer is recorded with its time, so a test can read off what clients saw during a
 * fault and when the first success came after it. Every write carries an idempotency key, so a
 * write whose answer was lost can be repeated safely afterwards.
 */
import { randomUUID } from "node:crypto";
import type { McpConnection } from "./mcp.js";

export type Kind = "write" | "search";
export type Surface = "rest" | "mcp";

/** One answer a client got. `status` is the HTTP status (REST) or ok / unavailable / isError:<reason> / error:<class> (MCP). */
export interface Outcome {
  kind: Kind;
  surface: Surface;
  startedAt: number;
  at: number;
  status: string;
  ok: boolean;
}

export interface WriteAttempt {
  surface: Surface;
  key: string;
  body: { memoryType: "fact"; topic: string; content: string };
  status: string;
  /** The memory id the answer named (successful writes only). */
  id?: string;
}

export interface LoadOptions {
  baseUrl: string;
  apiKey: string;
  mcp: McpConnection;
  /** Distinguishes this run's memories. */
  runId: string;
  restWriters: number;
  mcpWriters: number;
  restSearchers: number;
  mcpSearchers: number;
  /** Pause after each request, per client. */
  pauseMs: number;
}

const REQUEST_TIMEOUT_MS = 20_000;

export class FaultLoad {
  readonly outcomes: Outcome[] = [];
  readonly writes: WriteAttempt[] = [];
  private running = false;
  private loops: Promise<void>[] = [];

  constructor(private readonly options: LoadOptions) {}

  start(): void {
    this.running = true;
    const { restWriters, mcpWriters, restSearchers, mcpSearchers } = this.options;
    let writer = 0;
    for (let i = 0; i < restWriters; i++) this.loops.push(this.loop(() => this.write("rest", writer), writer++));
    for (let i = 0; i < mcpWriters; i++) this.loops.push(this.loop(() => this.write("mcp", writer), writer++));
    for (let i = 0; i < restSearchers; i++) this.loops.push(this.loop(() => this.search("rest"), -1));
    for (let i = 0; i < mcpSearchers; i++) this.loops.push(this.loop(() => this.search("mcp"), -1));
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  /** When the first request of this kind that started at or after `since` succeeded. */
  firstSuccess(kind: Kind, since: number): number | undefined {
    return this.outcomes
      .filter((o) => o.kind === kind && o.ok && o.startedAt >= since)
      .reduce<number | undefined>((min, o) => (min === undefined || o.at < min ? o.at : min), undefined);
  }

  /** Failed answers (by kind, surface and status) of requests that ended in [from, to]. */
  errorsBetween(from: number, to: number): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const o of this.outcomes) {
      if (o.ok || o.at < from || o.at > to) continue;
      const label = `${o.kind} ${o.surface} ${o.status}`;
      counts[label] = (counts[label] ?? 0) + 1;
    }
    return counts;
  }

  /** Requests of this kind that ended in [from, to]. */
  countBetween(kind: Kind, from: number, to: number): number {
    return this.outcomes.filter((o) => o.kind === kind && o.at >= from && o.at <= to).length;
  }

  /** Sends one write (a fresh one, or a repeat of `attempt`) and records nothing in the load's outcomes. */
  async send(surface: Surface, body: WriteAttempt["body"], key: string): Promise<{ status: string; id?: string }> {
    return surface === "rest" ? this.restWrite(body, key) : this.mcpWrite(body, key);
  }

  private async loop(step: () => Promise<void>, _id: number): Promise<void> {
    while (this.running) {
      await step();
      await new Promise((resolve) => setTimeout(resolve, this.options.pauseMs));
    }
  }

  private seq = 0;

  private async write(surface: Surface, writer: number): Promise<void> {
    const n = ++this.seq;
    const body = {
      memoryType: "fact" as const,
      topic: `crate ${writer}`,
      // A measurable claim, so every memory's extraction job leaves a fact proposal behind.
      content: `Load ${this.options.runId} writer ${writer} item ${n}: the crate weighs ${10 + (n % 90)} kg.`,
    };
    const key = randomUUID();
    const startedAt = Date.now();
    const answer = await this.send(surface, body, key);
    this.record("write", surface, startedAt, answer.status);
    this.writes.push({ surface, key, body, status: answer.status, ...(answer.id !== undefined ? { id: answer.id } : {}) });
  }

  private async search(surface: Surface): Promise<void> {
    const startedAt = Date.now();
    const query = { query: "how heavy is the crate" };
    const status = surface === "rest" ? (await this.rest("/api/v1/search", query)).status : await this.mcpStatus("search", query);
    this.record("search", surface, startedAt, status);
  }

  private record(kind: Kind, surface: Surface, startedAt: number, status: string): void {
    const ok = status === "200" || status === "201" || status === "ok";
    this.outcomes.push({ kind, surface, startedAt, at: Date.now(), status, ok });
  }

  private async restWrite(body: WriteAttempt["body"], key: string): Promise<{ status: string; id?: string }> {
    const answer = await this.rest("/api/v1/memories", body, { "Idempotency-Key": `"${key}"` });
    return { status: answer.status, ...(answer.id !== undefined ? { id: answer.id } : {}) };
  }

  private async mcpWrite(body: WriteAttempt["body"], key: string): Promise<{ status: string; id?: string }> {
    let id: string | undefined;
    const status = await this.mcpStatus("remember", { ...body, idempotencyKey: key }, (structured) => {
      id = (structured as { memory?: { id?: string } } | undefined)?.memory?.id;
    });
    return { status, ...(id !== undefined ? { id } : {}) };
  }

  /** A REST call's status; a 503 without Retry-After is its own status, since clients need the header. */
  private async rest(path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: string; id?: string }> {
    try {
      const response = await fetch(`${this.options.baseUrl}${path}`, {
        method: "POST",
        headers: { Authorization: `Bearer ${this.options.apiKey}`, "Content-Type": "application/json", ...headers },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const json = (await response.json().catch(() => ({}))) as { memory?: { id?: string } };
      const status = response.status === 503 && response.headers.get("retry-after") === null ? "503-without-retry-after" : String(response.status);
      return { status, ...(json.memory?.id !== undefined ? { id: json.memory.id } : {}) };
    } catch (err) {
      return { status: `fetch-failed:${(err as Error).name}` };
    }
  }

  private async mcpStatus(tool: string, args: Record<string, unknown>, onOk?: (structured: unknown) => void): Promise<string> {
    try {
      const result = await this.options.mcp.client.callTool({ name: tool, arguments: args }, { timeout: REQUEST_TIMEOUT_MS });
      if (!result.isError) {
        onOk?.(result.structuredContent);
        return "ok";
      }
      const text = ((result.content as Array<{ text?: string }> | undefined) ?? []).map((c) => c.text ?? "").join(" ");
      return text.startsWith("unavailable:") ? "unavailable" : `isError:${text.split(":", 1)[0]}`;
    } catch (err) {
      // The HTTP layer answered before MCP did (e.g. 503 while the key could not be resolved).
      const message = (err as Error).message;
      const http = /\b(\d{3})\b/.exec(message)?.[1];
      return http ? `http-${http}` : `error:${(err as Error).name}`;
    }
  }
}

/** What clients may see during a fault: success, or a retryable unavailable (503 with Retry-After). */
export const ACCEPTABLE_STATUSES = new Set(["200", "201", "503", "ok", "unavailable", "http-503"]);
