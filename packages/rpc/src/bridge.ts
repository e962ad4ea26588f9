/**
 * Whole services through the bridge (docs/adr/0029, 0040): each RPC is a contract entry (its
 * request and response zod schemas), and one generic function per side turns a service's RPCs into
 * calls and handlers in the public shapes. The value rules themselves are in wire-shape.ts.
 */
import type { z } from "zod";
import type { CallOptions, RpcMethods, ServiceSet } from "./client.js";
import { publicCodecs, Unreadable, type MethodContract } from "./codec.js";
import type { CallContext, Handlers, ServedMethod } from "./server.js";
import type { AnyService, KindOf, MethodName } from "./types.js";
import { fromWire, toWire, validated } from "./wire-shape.js";

export type Contract<S extends AnyService> = { readonly [K in MethodName<S>]?: MethodContract };
type Bridged<S extends AnyService, C extends Contract<S>> = keyof C & MethodName<S>;
type Entry<C, K extends keyof C> = C[K] & MethodContract;

/**
 * A public value as a service may answer it: an instant may still be a Date (toWire writes it as
 * ISO-8601); a field that may be left out may be null, and a nullable one undefined (both travel
 * as absent, and absent reads back as the public schema says: null or left out).
 */
type Answer<T> = T extends string ? T | Date : T extends readonly (infer E)[] ? Answer<E>[] : T extends object ? AnswerObject<T> : T;
type AnswerObject<T> = { [K in keyof T as null extends T[K] ? never : K]: Answer<T[K]> | (undefined extends T[K] ? null : never) } & {
  [K in keyof T as null extends T[K] ? K : never]?: Answer<T[K]> | undefined;
};

type In<C, K extends keyof C> = z.output<Entry<C, K>["request"]>;
type Out<C, K extends keyof C> = Answer<z.input<Entry<C, K>["response"]>>;

/**
 * A domain function per RPC: the validated public request in, the public response out. For a
 * streaming RPC the contract's request or response is the shape of one message of the stream:
 * a client-streaming function reads the validated requests as they arrive, a server-streaming one
 * yields its responses.
 */
export type BridgedHandlers<S extends AnyService, C extends Contract<S>> = {
  [K in Bridged<S, C>]: KindOf<S, K> extends "client_streaming"
    ? (inputs: AsyncIterable<In<C, K>>, ctx: CallContext) => Promise<Out<C, K>>
    : KindOf<S, K> extends "server_streaming"
      ? (input: In<C, K>, ctx: CallContext) => AsyncIterable<Out<C, K>>
      : (input: In<C, K>, ctx: CallContext) => Promise<Out<C, K>>;
};

/**
 * Server side, for every RPC of the contract: the caller's request, decoded straight from bytes to
 * its public shape (codec.ts), is validated here with the contract's schema (a refusal names the
 * field), the domain answers, and the answer is encoded straight to bytes. RpcServer.addService
 * registers these with their codecs.
 */
export function bridgeHandlers<S extends AnyService, C extends Contract<S>, K extends Bridged<S, C>>(
  service: S,
  contract: C,
  domain: Pick<BridgedHandlers<S, C>, K>,
): Pick<Handlers<S>, K> {
  const handlers: Record<string, ServedMethod> = {};
  for (const name of Object.keys(domain) as K[]) {
    const method = service.method[name]!;
    const entry = contract[name] as MethodContract;
    const parse = (value: unknown) => admitted(entry.request, value);
    let handler: ServedMethod["handler"];
    if (method.methodKind === "client_streaming") {
      const run = domain[name] as unknown as (inputs: AsyncIterable<unknown>, ctx: CallContext) => Promise<unknown>;
      // Each request is validated as it is read, so a bad one refuses the call before the next is read.
      handler = (requests, ctx) => run(mapStream(requests as AsyncIterable<unknown>, parse), ctx);
    } else if (method.methodKind === "server_streaming") {
      const run = domain[name] as unknown as (input: unknown, ctx: CallContext) => AsyncIterable<unknown>;
      handler = (request, ctx) => run(parse(request), ctx);
    } else {
      const run = domain[name] as unknown as (input: unknown, ctx: CallContext) => Promise<unknown>;
      handler = async (request, ctx) => run(parse(request), ctx);
    }
    handlers[name] = { codecs: publicCodecs(method, entry), handler };
  }
  return handlers as unknown as Pick<Handlers<S>, K>;
}

/** A decoded request, validated by its schema; one that had no public form is refused here too, after the credential check. */
function admitted(schema: z.ZodType, value: unknown): unknown {
  if (value instanceof Unreadable) throw value.reason;
  return validated(schema, value);
}

type Sent<C, K extends keyof C> = z.input<Entry<C, K>["request"]>;
type Received<C, K extends keyof C> = z.output<Entry<C, K>["response"]>;

/** Client side: each RPC of the contract takes the public request(s) and answers the public response(s). */
export type BridgedClient<S extends AnyService, C extends Contract<S>> = {
  [K in Bridged<S, C>]: KindOf<S, K> extends "client_streaming"
    ? (inputs: AsyncIterable<Sent<C, K>> | Iterable<Sent<C, K>>, options: CallOptions) => Promise<Received<C, K>>
    : KindOf<S, K> extends "server_streaming"
      ? (input: Sent<C, K>, options: CallOptions) => AsyncIterable<Received<C, K>>
      : (input: Sent<C, K>, options: CallOptions) => Promise<Received<C, K>>;
};

/** Converts a stream one message at a time, as it is read (leaving early closes the source too). */
async function* mapStream<T, U>(source: AsyncIterable<T> | Iterable<T>, convert: (value: T) => U): AsyncGenerator<U> {
  for await (const value of source) yield convert(value);
}

const bridgedClients = new WeakMap<object, Map<object, unknown>>();

/** Built once per client and contract, so callers may ask for it on every call. */
export function bridgeClient<S extends AnyService, C extends Contract<S>>(service: S, contract: C, client: RpcMethods<S>): BridgedClient<S, C> {
  let byContract = bridgedClients.get(client);
  if (byContract === undefined) bridgedClients.set(client, (byContract = new Map()));
  const known = byContract.get(contract);
  if (known !== undefined) return known as BridgedClient<S, C>;
  const calls: Record<string, unknown> = {};
  for (const name of Object.keys(contract) as Bridged<S, C>[]) {
    const method = service.method[name]!;
    const { response } = contract[name] as MethodContract;
    const send = (input: unknown) => toWire(method.input, input);
    const read = (message: never) => fromWire(response, method.output, message);
    if (method.methodKind === "client_streaming") {
      const call = client[name] as unknown as (requests: AsyncIterable<unknown>, options: CallOptions) => Promise<never>;
      calls[name] = async (inputs: AsyncIterable<unknown> | Iterable<unknown>, options: CallOptions) => read(await call(mapStream(inputs, send), options));
    } else if (method.methodKind === "server_streaming") {
      const call = client[name] as unknown as (request: unknown, options: CallOptions) => AsyncIterable<never>;
      calls[name] = (input: unknown, options: CallOptions) => mapStream(call(send(input), options), read);
    } else {
      const call = client[name] as unknown as (request: unknown, options: CallOptions) => Promise<never>;
      calls[name] = async (input: unknown, options: CallOptions) => read(await call(send(input), options));
    }
  }
  byContract.set(contract, calls);
  return calls as BridgedClient<S, C>;
}

/** A contract per service of a set, by the same names. */
export type Contracts<M extends ServiceSet> = { readonly [K in keyof M]: Contract<M[K]> };
/** Every service of a set through the bridge, by the same names. */
export type BridgedClients<M extends ServiceSet, C extends Contracts<M>> = { readonly [K in keyof M]: BridgedClient<M[K], C[K]> };

/** bridgeClient for each service of a peer's clients (createRpcClients, or any of its services); cheap to ask for per call. */
export function bridgeClients<M extends ServiceSet, C extends Contracts<M>, K extends keyof M & string>(
  services: M,
  contracts: C,
  clients: { readonly [P in K]: RpcMethods<M[P]> },
): Pick<BridgedClients<M, C>, K> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(clients) as K[]) if (key in services) out[key] = bridgeClient(services[key], contracts[key], clients[key]);
  return out as Pick<BridgedClients<M, C>, K>;
}
