import { once } from "node:events";
import * as grpc from "@grpc/grpc-js";
import type { DescMethod } from "@bufbuild/protobuf";
import { AppError, reasonForGrpcCode } from "@3ngram/errors";
import type { CallerIdentity, CredentialSigner } from "./credentials.js";
import { checkHealthOn, type ServingStatus } from "./health.js";
import { answerLostInTransit, isRetryableRead } from "./read-retry.js";
import { codecServiceDefinition, messageCodecs, type MethodCodecs } from "./service-definition.js";
import { STATUS_DETAILS_TRAILER, decodeStatusDetails, isRetryableReason } from "./status-details.js";
import { traceClientCall, traceClientStream } from "./trace-context.js";
import type { AnyService, KindOf, MethodName, RequestInitOf, ResponseOf } from "./types.js";

export interface CallOptions {
  /** Who the call acts for; signed into a fresh short-lived credential. */
  identity: CallerIdentity;
  /** Overrides the client's default deadline. */
  deadlineMs?: number;
  /** Cancels the call when aborted (the server's handler sees its own signal abort). */
  signal?: AbortSignal;
}

/**
 * A service's RPCs as typed calls, one function per RPC shaped by its kind: unary takes a request
 * and answers a response; client-streaming takes the requests as an (async) iterable, sent as the
 * server takes them, and answers once; server-streaming answers an async iterable of responses,
 * read as the caller consumes them (leaving the loop early cancels the call).
 */
export type RpcMethods<S extends AnyService> = {
  [K in MethodName<S>]: KindOf<S, K> extends "client_streaming"
    ? (requests: AsyncIterable<RequestInitOf<S, K>> | Iterable<RequestInitOf<S, K>>, options: CallOptions) => Promise<ResponseOf<S, K>>
    : KindOf<S, K> extends "server_streaming"
      ? (request: RequestInitOf<S, K>, options: CallOptions) => AsyncIterable<ResponseOf<S, K>>
      : (request: RequestInitOf<S, K>, options: CallOptions) => Promise<ResponseOf<S, K>>;
};

/** What a client's channel offers besides its calls. */
interface RpcChannelHandle {
  /** The peer's gRPC health, asked over the channel that serves these calls. */
  health(): Promise<ServingStatus>;
  close(): void;
}

export type RpcClient<S extends AnyService> = RpcMethods<S> & RpcChannelHandle;

/** Services of one peer by the names a caller gives them. */
export type ServiceSet = Record<string, AnyService>;
/** A client per service of the set, all over one channel. */
export type RpcClients<M extends ServiceSet> = { readonly [K in keyof M]: RpcMethods<M[K]> } & RpcChannelHandle;

export interface RpcClientOptions {
  /** host:port, or dns:///name:port to balance over every address of a headless Service. */
  address: string;
  /** The server's name, which is the credential audience ("memory", "search"). */
  audience: string;
  signer: CredentialSigner;
  defaultDeadlineMs?: number;
  /** Largest response message accepted, in bytes (grpc-js defaults to 4 MiB). */
  maxReceiveMessageBytes?: number;
  /** Largest request message sent, in bytes (grpc-js sends any size by default). */
  maxSendMessageBytes?: number;
}

/**
 * How a channel rides out a peer restart. grpc-js' own reconnect backoff grows to 120 s, so a peer
 * back after a minute would stay unreachable for another two; bounded here, a restarted peer is
 * found within half a second of it listening (0.25 s on average; with a 1 s cap it was half of a
 * restarted search's time to its first answer after it listened). An attempt at a peer that is
 * not there is refused at once or times out, so twice a second per channel costs nothing.
 * Keepalive pings notice a peer that vanished without closing the connection (a lost node, a cut
 * network) instead of waiting on the kernel.
 */
const CHANNEL_OPTIONS = {
  "grpc.initial_reconnect_backoff_ms": 100,
  "grpc.max_reconnect_backoff_ms": 500,
  "grpc.keepalive_time_ms": 30_000,
  "grpc.keepalive_timeout_ms": 10_000,
  "grpc.keepalive_permit_without_calls": 1,
} as const;

/**
 * Calls that change nothing (or only repeat a change, like stamping a key's last use) are retried
 * on UNAVAILABLE by grpc-js itself, inside the caller's deadline; which ones is declared in the
 * .proto (`idempotency_level`). Writes are never retried here: whether a failed write landed is
 * for the caller to settle, with an idempotency key.
 */
const READ_RETRY_POLICY = {
  maxAttempts: 4,
  initialBackoff: "0.1s",
  maxBackoff: "1s",
  backoffMultiplier: 2,
  retryableStatusCodes: ["UNAVAILABLE"],
};
/**
 * A peer that keeps failing is not hammered: every failed attempt costs a token and every success
 * earns one back, and retries stop while fewer than half the tokens are left, that is once
 * failures outnumber successes by 100. The bucket is that deep because a replica that dies fails
 * every call in flight on it at once (all its share of the channel's concurrent calls): with the
 * 10 tokens of gRPC's example, five of those failures used up the retries of all the others, and
 * searches failed that another replica would have answered. A success earns a whole token so that
 * the bucket is full again a moment after an outage, ready for the next one.
 */
const RETRY_THROTTLING = { maxTokens: 200, tokenRatio: 1 };

/** The grpc-js service config: round-robin over every resolved address, and retries for the reads of every service. */
export function serviceConfig(...services: AnyService[]): string {
  const reads = services.flatMap((service) => service.methods.filter(isRetryableRead).map((m) => ({ service: service.typeName, method: m.name })));
  return JSON.stringify({
    // Round-robin over every resolved address so scaled-out search pods all take load.
    loadBalancingConfig: [{ round_robin: {} }],
    ...(reads.length > 0 ? { methodConfig: [{ name: reads, retryPolicy: READ_RETRY_POLICY }], retryThrottling: RETRY_THROTTLING } : {}),
  });
}

/**
 * A typed client for a protobuf-es service over grpc-js. Every call carries a signed service
 * credential and a deadline; failures come back as AppError with the server's reason code.
 */
export function createRpcClient<S extends AnyService>(service: S, options: RpcClientOptions): RpcClient<S> {
  const { only, ...handle } = createRpcClients({ only: service }, options);
  return { ...(only as RpcMethods<S>), ...handle };
}

/**
 * Clients of several services of one peer over a single channel (one connection per resolved
 * address, one retry budget, one health answer): the memory service's contexts are separate
 * services on one server (docs/adr/0033), and a caller should not open a connection per context.
 * These take and answer protobuf-es messages; connectPeer (peer.ts) is the same in public shapes.
 */
export function createRpcClients<M extends ServiceSet>(services: M, options: RpcClientOptions): RpcClients<M> {
  return bindServices(services, options, (service) => new Map(service.methods.map((method) => [method, messageCodecs(method)])));
}

/**
 * One channel to a peer and its services bound on it, each method through the codecs `codecsOf`
 * gives it (a method without codecs is not bound): the services by the set's names, with the
 * channel's health and close.
 */
export function bindServices<M extends ServiceSet>(
  services: M,
  options: RpcClientOptions,
  codecsOf: (service: AnyService, key: string) => ReadonlyMap<DescMethod, MethodCodecs>,
): RpcClients<M> {
  const channel = new grpc.Channel(options.address, grpc.credentials.createInsecure(), {
    ...CHANNEL_OPTIONS,
    "grpc.service_config": serviceConfig(...Object.values(services)),
    ...(options.maxReceiveMessageBytes !== undefined ? { "grpc.max_receive_message_length": options.maxReceiveMessageBytes } : {}),
    ...(options.maxSendMessageBytes !== undefined ? { "grpc.max_send_message_length": options.maxSendMessageBytes } : {}),
  });
  const clients: Record<string, unknown> = Object.fromEntries(
    Object.entries(services).map(([key, service]) => [key, bindService(service, codecsOf(service, key), channel, options)]),
  );
  return { ...clients, close: () => channel.close(), health: () => checkHealthOn(channel) } as RpcClients<M>;
}

function bindService(service: AnyService, codecs: ReadonlyMap<DescMethod, MethodCodecs>, channel: grpc.Channel, options: RpcClientOptions): unknown {
  const Ctor = grpc.makeGenericClientConstructor(codecServiceDefinition(service, codecs), service.name);
  // The address is unused when a channel is given; closing the channel closes every client on it.
  const client = new Ctor(options.address, grpc.credentials.createInsecure(), { channelOverride: channel });
  const defaultDeadlineMs = options.defaultDeadlineMs ?? 10_000;
  const methods: Record<string, unknown> = {};
  // grpc-js builds one function per method at run time, shaped by the method's kind.
  const grpcMethods = client as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const [method, { request: requestCodec }] of codecs) {
    const fullName = `${service.typeName}/${method.name}`;
    const rpc = grpcMethods[method.localName]!.bind(client);
    // The request is encoded here, before grpc-js sees it: a value that cannot be written fails the
    // call with its own error, not as a transport failure.
    const encode = (request: unknown) => requestCodec.encode(request);
    const start = async (callOptions: CallOptions) => {
      const metadata = new grpc.Metadata();
      metadata.set("authorization", `Bearer ${await options.signer.sign(callOptions.identity, options.audience)}`);
      return { metadata, deadline: Date.now() + (callOptions.deadlineMs ?? defaultDeadlineMs) };
    };
    const fail = (err: grpc.ServiceError) => fromServiceError(err, options.audience);
    switch (method.methodKind) {
      case "unary": {
        const repeatable = isRetryableRead(method);
        methods[method.localName] = async (request: unknown, callOptions: CallOptions) => {
          const bytes = encode(request);
          const { metadata, deadline } = await start(callOptions);
          const attempt = (sent: grpc.Metadata) =>
            unaryAttempt(callOptions.signal, (callback) => rpc(bytes, sent, { deadline }, callback) as grpc.ClientUnaryCall);
          return traceClientCall(fullName, metadata, async () => {
            let outcome = await attempt(metadata);
            // One more attempt, within the same deadline, for a read whose answer was cut off after
            // it began (read-retry.ts): the channel does not retry those. Once is enough for one
            // dying replica; the new attempt has the channel's own retries besides.
            if ("failure" in outcome && repeatable && answerLostInTransit(outcome.failure, outcome.headersReceived) && !callOptions.signal?.aborted) {
              outcome = await attempt(metadata.clone());
            }
            if ("failure" in outcome) throw fail(outcome.failure);
            return outcome.response as never;
          });
        };
        break;
      }
      case "client_streaming":
        methods[method.localName] = async (requests: AsyncIterable<unknown> | Iterable<unknown>, callOptions: CallOptions) => {
          const { metadata, deadline } = await start(callOptions);
          return traceClientCall(fullName, metadata, () => {
            let stream: grpc.ClientWritableStream<unknown> | undefined;
            const answer = cancellable(
              callOptions.signal,
              (callback) => (stream = rpc(metadata, { deadline }, callback) as grpc.ClientWritableStream<unknown>),
              fail,
            );
            // The server may answer (refuse) before every request is sent; the answer wins, and what
            // is left of the requests is not read.
            const sent = sendAll(stream!, requests, encode, answer);
            return Promise.all([answer, sent]).then(([response]) => response);
          });
        };
        break;
      case "server_streaming":
        methods[method.localName] = (request: unknown, callOptions: CallOptions) => {
          // Encoded when called, so a request that cannot be written throws to the caller at once.
          const bytes = encode(request);
          return readAll(
            fullName,
            callOptions,
            async () => {
              const { metadata, deadline } = await start(callOptions);
              return { metadata, open: () => rpc(bytes, metadata, { deadline }) as grpc.ClientReadableStream<unknown> };
            },
            fail,
          );
        };
        break;
      default:
        throw new Error(`${fullName}: ${method.methodKind} RPCs are not supported`);
    }
  }
  return methods;
}

/** How one attempt of a unary call ended: its answer, or its failure and whether the server's response headers had come. */
type UnaryOutcome = { response: unknown } | { failure: grpc.ServiceError; headersReceived: boolean };

/** Runs one attempt of a unary call, cancelling it when `signal` aborts; never rejects. */
function unaryAttempt(
  signal: AbortSignal | undefined,
  begin: (callback: (err: grpc.ServiceError | null, response: unknown) => void) => grpc.ClientUnaryCall,
): Promise<UnaryOutcome> {
  return new Promise((resolve) => {
    let headersReceived = false;
    const cancel = () => call.cancel();
    const call = begin((err, response) => {
      signal?.removeEventListener("abort", cancel);
      resolve(err ? { failure: err, headersReceived } : { response });
    });
    call.once("metadata", () => (headersReceived = true));
    if (signal?.aborted) cancel();
    else signal?.addEventListener("abort", cancel, { once: true });
  });
}

/** Runs a call that answers once (unary or client-streaming), cancelling it when `signal` aborts. */
function cancellable(
  signal: AbortSignal | undefined,
  begin: (callback: (err: grpc.ServiceError | null, response: unknown) => void) => grpc.Call,
  fail: (err: grpc.ServiceError) => AppError,
): Promise<never> {
  return new Promise((resolve, reject) => {
    const cancel = () => call.cancel();
    const call = begin((err, response) => {
      signal?.removeEventListener("abort", cancel);
      if (err) reject(fail(err));
      else resolve(response as never);
    });
    if (signal?.aborted) cancel();
    else signal?.addEventListener("abort", cancel, { once: true });
  });
}

/**
 * Writes every request of a client stream, waiting whenever the server's window is full, then
 * half-closes. Stops early once the call has ended (the server answered or refused); a failing
 * source cancels the call and is what the caller sees.
 */
async function sendAll(
  stream: grpc.ClientWritableStream<unknown>,
  requests: AsyncIterable<unknown> | Iterable<unknown>,
  toBytes: (request: unknown) => Buffer,
  answer: Promise<unknown>,
): Promise<void> {
  let ended = false;
  const over = answer.then(
    () => (ended = true),
    () => (ended = true),
  );
  try {
    for await (const request of requests) {
      if (ended) return;
      if (!stream.write(toBytes(request))) await Promise.race([once(stream, "drain"), over]);
    }
  } catch (err) {
    stream.cancel();
    throw err;
  }
  if (!ended) stream.end();
}

/** A server stream as an async iterable: errors are our AppError, and leaving the loop early cancels the call. */
async function* readAll(
  fullName: string,
  callOptions: CallOptions,
  begin: () => Promise<{ metadata: grpc.Metadata; open: () => grpc.ClientReadableStream<unknown> }>,
  fail: (err: grpc.ServiceError) => AppError,
): AsyncGenerator<never> {
  const { metadata, open } = await begin();
  const span = traceClientStream(fullName, metadata);
  const stream = open();
  const { signal } = callOptions;
  const cancel = () => stream.cancel();
  if (signal?.aborted) cancel();
  else signal?.addEventListener("abort", cancel, { once: true });
  let failure: unknown;
  try {
    // A Readable in object mode: grpc-js reads the next message only as this loop asks for it.
    for await (const message of stream) yield message as never;
  } catch (err) {
    failure = isServiceError(err) ? fail(err) : err;
    throw failure;
  } finally {
    signal?.removeEventListener("abort", cancel);
    // Reached early (the caller broke out or threw): the server stops when the call is cancelled.
    stream.cancel();
    span.end(failure);
  }
}

function isServiceError(err: unknown): err is grpc.ServiceError {
  return typeof (err as { code?: unknown } | null)?.code === "number" && (err as { metadata?: unknown }).metadata instanceof grpc.Metadata;
}

/**
 * Rebuilds the server's AppError from a gRPC status and the google.rpc.Status in its trailers.
 * A status without one of ours (a transport failure raised by grpc-js, a foreign server, a
 * garbled trailer) falls back to the reason its code implies.
 */
export function fromServiceError(err: grpc.ServiceError, peer: string): AppError {
  const raw = err.metadata?.get(STATUS_DETAILS_TRAILER)[0];
  const decoded = raw instanceof Buffer ? decodeStatusDetails(raw, err.code) : undefined;
  if (decoded) {
    const { reason, message, field, ids, retryAfterMs } = decoded;
    return new AppError(reason, message || err.details, {
      ...(field !== undefined ? { field } : {}),
      ...(ids !== undefined ? { ids } : {}),
      retryable: isRetryableReason(reason),
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    });
  }
  const reason = reasonForGrpcCode(err.code);
  // Transport failures (peer down, deadline) carry grpc-js's own text; say plainly what happened instead.
  const message =
    reason === "unavailable"
      ? `${peer} service unavailable, retry later`
      : err.code === grpc.status.RESOURCE_EXHAUSTED
        ? "message too large"
        : "internal error";
  return new AppError(reason, message, { retryable: isRetryableReason(reason) });
}
