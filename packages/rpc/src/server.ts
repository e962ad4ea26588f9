import { addAbortSignal } from "node:stream";
import * as grpc from "@grpc/grpc-js";
import { ReflectionService } from "@grpc/reflection";
import { toBinary, type DescFile, type DescMethod } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { file_google_rpc_error_details } from "@3ngram/proto/google/rpc/error_details";
import { file_google_rpc_status } from "@3ngram/proto/google/rpc/status";
import { HealthImplementation, service as healthServiceDefinition } from "grpc-health-check";
import { AppError, isAppError, reasonMapping, toAppError } from "@3ngram/errors";
import type { Logger } from "pino";
import { Histogram, type Registry } from "prom-client";
import { z } from "zod";
import type { CredentialVerifier, VerifiedCaller } from "./credentials.js";
import { codecServiceDefinition, messageCodecs, type MethodCodecs } from "./service-definition.js";
import { STATUS_DETAILS_TRAILER, encodeStatusDetails, errorDomain } from "./status-details.js";
import { failed, traceServerCall } from "./trace-context.js";
import type { AnyService, KindOf, MethodName, RequestOf, ResponseInitOf } from "./types.js";

/** How often a serving service re-checks what it depends on (its database). */
const DEPENDENCY_CHECK_INTERVAL_MS = 2_000;

/** What a handler knows about its call. */
export class CallContext {
  constructor(
    readonly caller: VerifiedCaller,
    readonly method: string,
    readonly deadline: Date | undefined,
    readonly signal: AbortSignal,
    readonly log: Logger,
  ) {}

  /** The verified tenant. Methods whose policy requires a tenant never reach the handler without one. */
  get tenantId(): string {
    if (!this.caller.tenantId) throw new AppError("unauthenticated", "credential carries no tenant");
    return this.caller.tenantId;
  }

  get userId(): string | undefined {
    return this.caller.userId;
  }
}

export interface MethodPolicy {
  /** The call must carry at least one of these scopes. */
  anyScope: readonly string[];
  /** The call must name a tenant. */
  tenant: boolean;
}

/**
 * One function per RPC, shaped by its kind: a unary handler answers one response; a
 * client-streaming one reads the requests as they arrive and answers once; a server-streaming one
 * yields its responses (an async generator), each sent before the next is asked for. These take
 * and answer protobuf-es messages.
 */
type MessageHandler<S extends AnyService, K extends MethodName<S>> =
  KindOf<S, K> extends "client_streaming"
    ? (requests: AsyncIterable<RequestOf<S, K>>, ctx: CallContext) => Promise<ResponseInitOf<S, K>>
    : KindOf<S, K> extends "server_streaming"
      ? (request: RequestOf<S, K>, ctx: CallContext) => AsyncIterable<ResponseInitOf<S, K>>
      : (request: RequestOf<S, K>, ctx: CallContext) => Promise<ResponseInitOf<S, K>>;

/**
 * A handler with the codecs that read its requests and write its answers (bridgeHandlers makes
 * these, in public shapes): it takes what `codecs.request` decodes and answers what
 * `codecs.response` encodes, in the same kinds as a message handler.
 */
export interface ServedMethod {
  readonly codecs: MethodCodecs;
  readonly handler: Handler;
}

/** Per RPC, a message handler or a served method (bridgeHandlers). */
export type Handlers<S extends AnyService> = { [K in MethodName<S>]: MessageHandler<S, K> | ServedMethod };
type Handler = (request: unknown, ctx: CallContext) => Promise<unknown> | AsyncIterable<unknown>;
type AnyServerCall = grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerReadableStream<unknown, unknown> | grpc.ServerWritableStream<unknown, unknown>;
type Status = Partial<grpc.StatusObject>;
export type Policies<S extends AnyService> = { [K in MethodName<S>]: MethodPolicy };

export interface RpcServerOptions {
  /** Audience this server accepts credentials for, e.g. "memory". */
  name: string;
  verifier: CredentialVerifier;
  log: Logger;
  /** Clients reconnect after this, so new pods behind a headless Service get traffic. Default {@link DEFAULT_MAX_CONNECTION_AGE_MS}. */
  maxConnectionAgeMs?: number;
  /** Where to count calls and their durations (by method and outcome); omit to not measure. */
  registry?: Registry;
  /** Largest request message accepted, in bytes (grpc-js defaults to 4 MiB). */
  maxReceiveMessageBytes?: number;
}

/** How long a client connection lives before the server asks it to reconnect (GOAWAY). */
export const DEFAULT_MAX_CONNECTION_AGE_MS = 5 * 60_000;

/**
 * GRPC_MAX_CONNECTION_AGE_MS, read by every gRPC server. When a connection ends, a `dns:///` client
 * resolves the name again, so this bounds how long a newly started replica waits for traffic from
 * clients that were already connected; shorter spreads load sooner at the cost of reconnects.
 */
export const maxConnectionAgeEnv = z.coerce.number().int().min(1_000).max(86_400_000).default(DEFAULT_MAX_CONNECTION_AGE_MS);

/**
 * A grpc-js server that serves protobuf-es services, verifies a service credential on every
 * call, maps AppError reasons to gRPC status codes (with a google.rpc.Status in the trailers,
 * see status-details.ts), and always carries the standard health service and server reflection.
 */
export class RpcServer {
  readonly server: grpc.Server;
  readonly health = new HealthImplementation({ "": "NOT_SERVING" });
  private readonly serviceNames: string[] = [];
  private readonly reflectionFiles = new Map<string, Buffer>();
  private readonly calls: Histogram<"rpc" | "outcome"> | undefined;

  constructor(private readonly options: RpcServerOptions) {
    this.calls = options.registry
      ? new Histogram({
          name: "threengram_rpc_server_seconds",
          help: "gRPC calls served, by method and outcome (ok or a reason code)",
          labelNames: ["rpc", "outcome"],
          buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
          registers: [options.registry],
        })
      : undefined;
    this.server = new grpc.Server({
      "grpc.max_connection_age_ms": options.maxConnectionAgeMs ?? DEFAULT_MAX_CONNECTION_AGE_MS,
      "grpc.max_connection_age_grace_ms": 30_000,
      ...(options.maxReceiveMessageBytes !== undefined ? { "grpc.max_receive_message_length": options.maxReceiveMessageBytes } : {}),
    });
    this.health.addToServer(this.server);
    // Reflection also describes the error model, so a client that learns the API from reflection
    // can decode the Status every error carries.
    collectFiles(file_google_rpc_status, this.reflectionFiles);
    collectFiles(file_google_rpc_error_details, this.reflectionFiles);
  }

  addService<S extends AnyService>(service: S, handlers: Handlers<S>, policies: Policies<S>): void {
    const implementation: grpc.UntypedServiceImplementation = {};
    const codecs = new Map<DescMethod, MethodCodecs>();
    for (const method of service.methods) {
      const name = method.localName as MethodName<S>;
      const given = handlers[name] as Handler | ServedMethod | undefined;
      const served = typeof given === "object" ? given : { codecs: messageCodecs(method), handler: given as Handler };
      codecs.set(method, served.codecs);
      implementation[name] = this.wrap(method, `${service.typeName}/${method.name}`, served, policies[name]);
    }
    this.server.addService(codecServiceDefinition(service, codecs), implementation);
    this.serviceNames.push(service.typeName);
    this.health.setStatus(service.typeName, "NOT_SERVING");
    collectFiles(service.file, this.reflectionFiles);
  }

  /** Binds and starts. Pass port 0 to get a free port (tests). Resolves to the bound port. */
  async listen(address: string): Promise<number> {
    const files = [...this.reflectionFiles.values()];
    const healthFiles = (healthServiceDefinition.Check?.requestType as { fileDescriptorProtos?: Buffer[] } | undefined)?.fileDescriptorProtos;
    new ReflectionService({
      app: { format: "Protocol Buffer 3 DescriptorProto", type: {}, fileDescriptorProtos: files },
      ...(healthFiles ? { health: { format: "Protocol Buffer 3 DescriptorProto", type: {}, fileDescriptorProtos: healthFiles } } : {}),
    } as never).addToServer(this.server);
    return new Promise((resolve, reject) => {
      this.server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port)));
    });
  }

  /** Health reflects dependencies: callers flip it as their database or queue comes and goes. */
  setServing(serving: boolean): void {
    const status = serving ? "SERVING" : "NOT_SERVING";
    this.health.setStatus("", status);
    for (const name of this.serviceNames) this.health.setStatus(name, status);
  }

  /**
   * Keeps health in step with a dependency: `check` runs every `intervalMs` (never two at once)
   * and its answer sets SERVING or NOT_SERVING, so health goes NOT_SERVING while the database is
   * unreachable and back to SERVING on its own. Returns the function that stops watching.
   */
  followDependency(check: () => Promise<boolean>, intervalMs: number): () => void {
    let running = false;
    const timer = setInterval(() => {
      if (running) return;
      running = true;
      void check()
        .catch(() => false)
        .then((ok) => this.setServing(ok))
        .finally(() => (running = false));
    }, intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  /**
   * Listens on `address` and serves while `dependency` answers (re-asked every couple of seconds,
   * so SERVING returns within seconds of it and callers route around us meanwhile); `defer` stops
   * the checks and shuts the server down first when the service closes. Answers the bound port.
   */
  async serveWhile(address: string, dependency: () => Promise<boolean>, defer: (release: () => Promise<void>) => void): Promise<number> {
    const port = await this.listen(address);
    this.setServing(true);
    const stopFollowing = this.followDependency(dependency, DEPENDENCY_CHECK_INTERVAL_MS);
    defer(async () => {
      stopFollowing();
      await this.shutdown();
    });
    return port;
  }

  /** Stops intake, lets in-flight calls finish within the grace period, then forces. */
  async shutdown(graceMs = 5_000): Promise<void> {
    this.setServing(false);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.server.forceShutdown();
        resolve();
      }, graceMs);
      this.server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** grpc-js' handler for one method: requests arrive decoded; each answer is encoded here, inside the call's error handling. */
  private wrap(method: DescMethod, fullName: string, { codecs, handler }: ServedMethod, policy: MethodPolicy): grpc.UntypedHandleCall {
    const encode = (response: unknown) => codecs.response.encode(response);
    switch (method.methodKind) {
      case "unary":
        return ((call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
          this.serve(
            call,
            fullName,
            policy,
            async (ctx) => encode(await handler(call.request, ctx)),
            (status, response) => (status ? callback(status) : callback(null, response)),
          );
        }) satisfies grpc.handleUnaryCall<unknown, unknown>;
      case "client_streaming":
        return ((call: grpc.ServerReadableStream<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
          this.serve(
            call,
            fullName,
            policy,
            // Messages are read only as the handler asks for them (grpc-js reads on demand), so a
            // slow handler holds the sender back through HTTP/2 flow control rather than buffering;
            // the abort destroys the stream, so a handler waiting for the next message wakes up.
            async (ctx) => encode(await handler(addAbortSignal(ctx.signal, call), ctx)),
            (status, response) => (status ? callback(status) : callback(null, response)),
          );
        }) satisfies grpc.handleClientStreamingCall<unknown, unknown>;
      case "server_streaming":
        return ((call: grpc.ServerWritableStream<unknown, unknown>) => {
          this.serve(
            call,
            fullName,
            policy,
            async (ctx) => {
              const responses = handler(call.request, ctx) as AsyncIterable<unknown>;
              // The handler's next response is asked for only once the last one is accepted, so it
              // produces no faster than the client reads (and stops when the call ends).
              for await (const response of responses) await send(call, encode(response), ctx.signal);
              return undefined;
            },
            // A cancelled call is gone: there is nobody to send a status to.
            (status) => (status ? call.cancelled || call.emit("error", status) : call.end()),
          );
        }) satisfies grpc.handleServerStreamingCall<unknown, unknown>;
      default:
        throw new Error(`${fullName}: ${method.methodKind} RPCs are not supported`);
    }
  }

  /**
   * One call of any kind: the credential and scope policy, one SERVER span under the caller's
   * trace, an abort signal for a cancel or a passed deadline, metrics, and every failure turned
   * into a status with a google.rpc.Status in its trailers. `reply` sends the outcome.
   */
  private serve(
    call: AnyServerCall,
    fullName: string,
    policy: MethodPolicy,
    run: (ctx: CallContext) => Promise<unknown>,
    reply: (status: Status | null, response?: unknown) => void,
  ): void {
    const { verifier, log } = this.options;
    const domain = errorDomain(this.options.name);
    const abort = new AbortController();
    (call as grpc.ServerUnaryCall<unknown, unknown>).on("cancelled", () => abort.abort());
    const rawDeadline = call.getDeadline();
    const deadline = rawDeadline instanceof Date ? rawDeadline : Number.isFinite(rawDeadline) ? new Date(rawDeadline) : undefined;
    // grpc-js answers DEADLINE_EXCEEDED by itself; this makes the handler's signal say so too.
    const timer = deadline ? setTimeout(() => abort.abort(), Math.max(0, deadline.getTime() - Date.now())) : undefined;
    timer?.unref();
    const authorization = call.metadata.get("authorization")[0];
    const token = typeof authorization === "string" && authorization.startsWith("Bearer ") ? authorization.slice(7) : undefined;
    const started = performance.now();
    // The whole call, credential check included, is one SERVER span under the caller's trace.
    void traceServerCall(fullName, call.metadata, async (span) => {
      try {
        const caller = await verifier.verify(token);
        if (!policy.anyScope.some((s) => caller.scopes.includes(s))) {
          throw new AppError("insufficient_scope", `${policy.anyScope.join(" or ")} required`);
        }
        if (policy.tenant && !caller.tenantId) throw new AppError("unauthenticated", "credential carries no tenant");
        const callLog = log.child({ rpc: fullName, caller: caller.issuer });
        const ctx = new CallContext(caller, fullName, deadline, abort.signal, callLog);
        const response = await run(ctx);
        span.setAttribute("rpc.grpc.status_code", grpc.status.OK);
        this.calls?.observe({ rpc: fullName, outcome: "ok" }, (performance.now() - started) / 1000);
        log.debug({ rpc: fullName, ms: Math.round(performance.now() - started) }, "rpc ok");
        reply(null, response);
      } catch (err) {
        // A stream torn down under the handler by a cancel or a passed deadline says so, not "internal".
        const appError =
          abort.signal.aborted && !isAppError(err) ? new AppError("unavailable", "the call was cancelled or its deadline passed") : toAppError(err);
        const mapping = reasonMapping(appError.reason);
        span.setAttribute("rpc.grpc.status_code", mapping.grpc);
        if (!mapping.callerFault) failed(span, err, appError.reason);
        this.calls?.observe({ rpc: fullName, outcome: appError.reason }, (performance.now() - started) / 1000);
        const fields = { rpc: fullName, reason: appError.reason, ms: Math.round(performance.now() - started) };
        if (mapping.callerFault) log.warn(fields, "rpc refused");
        else log.error({ ...fields, error: err instanceof Error ? { type: err.name, message: err.message } : undefined }, "rpc failed");
        const trailers = new grpc.Metadata();
        trailers.set(STATUS_DETAILS_TRAILER, Buffer.from(encodeStatusDetails(appError, domain)));
        reply({ code: mapping.grpc, details: appError.message, metadata: trailers });
      } finally {
        clearTimeout(timer);
      }
    });
  }
}

/** Writes one message of a response stream, waiting while the client's window is full; throws once the call is gone. */
async function send(call: grpc.ServerWritableStream<unknown, unknown>, message: unknown, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  if (call.write(message)) return;
  await new Promise<void>((resolve, reject) => {
    const done = (err?: unknown) => {
      call.off("drain", onDrain);
      signal.removeEventListener("abort", onAbort);
      if (err) reject(err);
      else resolve();
    };
    const onDrain = () => done();
    const onAbort = () => done(signal.reason);
    call.on("drain", onDrain);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

function collectFiles(file: DescFile, into: Map<string, Buffer>): void {
  if (into.has(file.name)) return;
  into.set(file.name, Buffer.from(toBinary(FileDescriptorProtoSchema, file.proto)));
  for (const dep of file.dependencies) collectFiles(dep, into);
}
