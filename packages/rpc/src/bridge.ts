/**
 * The bridge between proto messages and the public zod shapes (docs/adr/0029). Our messages are
 * designed so that their canonical proto3 JSON mapping IS the public shape, so one generic function
 * per direction replaces a hand-written mapper per RPC:
 *
 * - toWire(Desc, value): a public value (Date or ISO-8601 strings, null or absent for "not given")
 *   → the proto message, through protobuf-es fromJson (Timestamps parse from RFC 3339).
 * - wireValue(schema, Desc, message): the proto message → the public value, through toJson with
 *   implicit fields emitted, then three generic touches: every Timestamp is rewritten exactly as
 *   Date.toISOString() prints it (toJson drops a zero fraction, so "…:00Z" would otherwise flake
 *   against "…:00.000Z"); an absent optional field becomes null where the zod schema accepts null;
 *   and an empty list becomes absent where the schema refuses [] but allows leaving it out (proto3
 *   cannot tell an empty repeated field from a missing one).
 *
 * Validation is not the bridge's job: the receiving trust boundary parses (parseWire), outputs are
 * checked by the round-trip tests rather than re-parsed on every call.
 */
import { fromJson, toJson, type DescField, type DescMessage, type JsonValue, type MessageShape } from "@bufbuild/protobuf";
import { invalidInput } from "@3ngram/errors";
import type { z } from "zod";
import type { CallOptions, RpcMethods, ServiceSet } from "./client.js";
import type { CallContext, Handlers } from "./server.js";
import type { AnyService, KindOf, MethodName } from "./types.js";

/** A public value → the proto message. Keys the message lacks are a programming error and throw. */
export function toWire<D extends DescMessage>(desc: D, value: unknown): MessageShape<D> {
  return fromJson(desc, plainJson(value) as JsonValue);
}

/** The proto message → its public shape, unvalidated: for a peer we trust (its output is covered by tests). */
export function fromWire<S extends z.ZodType, D extends DescMessage>(schema: S, desc: D, message: MessageShape<D>): z.output<S> {
  return wireValue(schema, desc, message) as z.output<S>;
}

/** The proto message → its public shape, validated by `schema`: for a trust boundary (what callers send). */
export function parseWire<S extends z.ZodType, D extends DescMessage>(schema: S, desc: D, message: MessageShape<D>): z.output<S> {
  const result = schema.safeParse(wireValue(schema, desc, message));
  if (!result.success) throw invalidInput(result.error.issues);
  return result.data;
}

export function wireValue<D extends DescMessage>(schema: z.ZodType, desc: D, message: MessageShape<D>): unknown {
  return shapeMessage(desc, toJson(desc, message, { alwaysEmitImplicit: true }) as Record<string, unknown>, schema);
}

const TIMESTAMP = "google.protobuf.Timestamp";

/** Drops undefined keys and writes Dates as ISO strings: what fromJson reads. */
function plainJson(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(plainJson);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) if (v !== undefined) out[key] = plainJson(v);
  return out;
}

function shapeMessage(desc: DescMessage, json: Record<string, unknown>, schema: z.ZodType | undefined): Record<string, unknown> {
  if (desc.typeName === "google.protobuf.Struct") return json;
  const shape = objectShape(schema, json);
  for (const field of desc.fields) {
    const key = field.jsonName;
    const child = shape?.[key];
    const value = json[key];
    if (value === undefined) {
      if (child !== undefined && accepts(child, null)) json[key] = null;
      continue;
    }
    if (Array.isArray(value) && value.length === 0 && child !== undefined && !accepts(child, EMPTY) && accepts(child, undefined)) {
      delete json[key];
      continue;
    }
    json[key] = shapeField(field, value, child);
  }
  return json;
}

function shapeField(field: DescField, value: unknown, schema: z.ZodType | undefined): unknown {
  if (field.fieldKind === "list" && field.listKind === "message") {
    const element = arrayElement(schema);
    return (value as unknown[]).map((v) => shapeOne(field.message, v, element));
  }
  if (field.fieldKind === "message") return shapeOne(field.message, value, schema);
  return value;
}

function shapeOne(desc: DescMessage, value: unknown, schema: z.ZodType | undefined): unknown {
  if (desc.typeName === TIMESTAMP) return new Date(value as string).toISOString();
  return shapeMessage(desc, value as Record<string, unknown>, schema);
}

// ---- Reading the zod schema (zod 4's documented `_zod.def` for tooling) ----

interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
  shape?: Record<string, z.ZodType>;
}
const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** Wrappers that do not change which keys an object has. */
function unwrap(schema: z.ZodType | undefined): z.ZodType | undefined {
  let current = schema;
  for (;;) {
    if (current === undefined) return undefined;
    const def = defOf(current);
    if (def.innerType !== undefined) current = def.innerType;
    else if (def.type === "pipe") current = def.in;
    else return current;
  }
}

/** The object shape a JSON object belongs to; of a union, the smallest object option holding all its keys. */
function objectShape(schema: z.ZodType | undefined, json: Record<string, unknown>): Record<string, z.ZodType> | undefined {
  const s = unwrap(schema);
  if (s === undefined) return undefined;
  const def = defOf(s);
  if (def.type === "object") return def.shape;
  if (def.type === "union") {
    const fits = (def.options ?? [])
      .map((option) => objectShape(option, json))
      .filter((shape) => shape !== undefined && Object.keys(json).every((k) => k in shape)) as Record<string, z.ZodType>[];
    return fits.sort((a, b) => Object.keys(a).length - Object.keys(b).length)[0];
  }
  return undefined;
}

function arrayElement(schema: z.ZodType | undefined): z.ZodType | undefined {
  const s = unwrap(schema);
  if (s === undefined) return undefined;
  const def = defOf(s);
  if (def.type === "array") return def.element;
  // A union of arrays (compact or full hits): the element union picks per object.
  if (def.type === "union") return { _zod: { def: { type: "union", options: (def.options ?? []).map(arrayElement).filter((e) => e !== undefined) } } } as never;
  return undefined;
}

const EMPTY: readonly never[] = [];
/** Whether a schema accepts null, undefined or [] (asked once per schema and value). */
const acceptance = new Map<unknown, WeakMap<z.ZodType, boolean>>([null, undefined, EMPTY].map((v) => [v, new WeakMap()]));
function accepts(schema: z.ZodType, value: null | undefined | typeof EMPTY): boolean {
  const cache = acceptance.get(value)!;
  let known = cache.get(schema);
  if (known === undefined) {
    known = schema.safeParse(value).success;
    cache.set(schema, known);
  }
  return known;
}

// ---- Whole services through the bridge ----

/** One RPC's public shapes: what its caller sends (validated by the service) and what it answers. */
export interface MethodContract {
  request: z.ZodType;
  response: z.ZodType;
}
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

/** Server side: bridge-in (parse what the caller sent) → domain → bridge-out, for every RPC of the contract. */
export function bridgeHandlers<S extends AnyService, C extends Contract<S>, K extends Bridged<S, C>>(
  service: S,
  contract: C,
  domain: Pick<BridgedHandlers<S, C>, K>,
): Pick<Handlers<S>, K> {
  const handlers: Record<string, unknown> = {};
  for (const name of Object.keys(domain) as K[]) {
    const method = service.method[name]!;
    const { request } = contract[name] as MethodContract;
    const parse = (message: never) => parseWire(request, method.input, message);
    const answer = (value: unknown) => toWire(method.output, value);
    if (method.methodKind === "client_streaming") {
      const run = domain[name] as unknown as (inputs: AsyncIterable<unknown>, ctx: CallContext) => Promise<unknown>;
      // Each message is validated as it is read, so a bad one refuses the call before the next is read.
      handlers[name] = async (messages: AsyncIterable<never>, ctx: CallContext) => answer(await run(mapStream(messages, parse), ctx));
    } else if (method.methodKind === "server_streaming") {
      const run = domain[name] as unknown as (input: unknown, ctx: CallContext) => AsyncIterable<unknown>;
      handlers[name] = (message: never, ctx: CallContext) => mapStream(run(parse(message), ctx), answer);
    } else {
      const run = domain[name] as unknown as (input: unknown, ctx: CallContext) => Promise<unknown>;
      handlers[name] = async (message: never, ctx: CallContext) => answer(await run(parse(message), ctx));
    }
  }
  return handlers as Pick<Handlers<S>, K>;
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
