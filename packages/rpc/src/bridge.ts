/**
 * The bridge between proto messages and the public zod shapes (docs/adr/0029). Our messages are
 * designed so that their canonical proto3 JSON mapping IS the public shape, so one generic function
 * per direction replaces a hand-written mapper per RPC:
 *
 * - toWire(Desc, value): a public value (Date or ISO-8601 strings, null or absent for "not given")
 *   → the proto message, through protobuf-es fromJson (Timestamps parse from RFC 3339).
 * - wireValue(schema, Desc, message): the proto message → the public value, through toJson with
 *   implicit fields emitted, then generic touches: every Timestamp is rewritten exactly as
 *   Date.toISOString() prints it (toJson drops a zero fraction, so "…:00Z" would otherwise flake
 *   against "…:00.000Z"); an absent optional field becomes null where the zod schema accepts null;
 *   and an empty list becomes absent where the schema refuses [] but allows leaving it out (proto3
 *   cannot tell an empty repeated field from a missing one). Each object's keys come in its zod
 *   schema's order (docs/adr/0040), so the public value reads as the schema's parse would print it.
 *
 * Two rules, both ways, make enums and selectors read as the public shapes do (docs/adr/0034):
 * - An enum value's public name is its proto name without the enum's shared prefix, in lower case
 *   (MEMORY_TYPE_DECISION is "decision"); the zero value (*_UNSPECIFIED) is "not given". A number
 *   the contract does not know reads as that number, so the receiving schema refuses it by field.
 * - A oneof whose name is a key of the public shape is flattened: that key holds the chosen
 *   member's proto field name, and the member message's fields sit beside it
 *   (OrientationSelector's `kind` oneof is {"kind": "scope", "scope": "work"}).
 *
 * On the wire (docs/adr/0040), publicCodecs runs these rules between the public value and the
 * bytes, so a hop is one change of representation per direction: the message exists only inside
 * one encode or decode. bridgeHandlers and connectPeer (peer.ts) use them; toWire, fromWire and
 * parseWire remain for message-level code and tests.
 *
 * Validation is not the codecs' job: the receiving trust boundary parses what its callers send
 * (bridgeHandlers, in the handler path); outputs are checked by the round-trip tests rather than
 * re-parsed on every call.
 */
import {
  fromBinary,
  fromJson,
  toBinary,
  toJson,
  type DescEnum,
  type DescField,
  type DescMessage,
  type DescMethod,
  type DescOneof,
  type JsonValue,
  type MessageShape,
} from "@bufbuild/protobuf";
import { invalidInput } from "@3ngram/errors";
import type { z } from "zod";
import type { CallOptions, RpcMethods, ServiceSet } from "./client.js";
import type { CallContext, Handlers, ServedMethod } from "./server.js";
import { bytesOf, type MethodCodecs } from "./service-definition.js";
import type { AnyService, KindOf, MethodName } from "./types.js";

/** A public value → the proto message. Keys the message lacks are a programming error and throw. */
export function toWire<D extends DescMessage>(desc: D, value: unknown): MessageShape<D> {
  return fromJson(desc, messageJson(desc, value) as JsonValue);
}

/** The proto message → its public shape, unvalidated: for a peer we trust (its output is covered by tests). */
export function fromWire<S extends z.ZodType, D extends DescMessage>(schema: S, desc: D, message: MessageShape<D>): z.output<S> {
  return wireValue(schema, desc, message) as z.output<S>;
}

/** The proto message → its public shape, validated by `schema`: for a trust boundary (what callers send). */
export function parseWire<S extends z.ZodType, D extends DescMessage>(schema: S, desc: D, message: MessageShape<D>): z.output<S> {
  return validated(schema, wireValue(schema, desc, message)) as z.output<S>;
}

/** A public value, validated by its schema: what a trust boundary acts on; a refusal names each field. */
function validated(schema: z.ZodType, value: unknown): unknown {
  const result = schema.safeParse(value);
  if (!result.success) throw invalidInput(result.error.issues);
  return result.data;
}

export function wireValue<D extends DescMessage>(schema: z.ZodType, desc: D, message: MessageShape<D>): unknown {
  return shapeMessage(desc, toJson(desc, message, { alwaysEmitImplicit: true }) as Record<string, unknown>, schema);
}

const TIMESTAMP = "google.protobuf.Timestamp";
const STRUCT = "google.protobuf.Struct";

// ---- Enums: one naming rule for every enum ----

interface EnumNames {
  /** Public name → number. */
  numbers: Map<string, number>;
  /** Proto JSON name (and number, for toJson's unknown values) → public name; the zero value maps to undefined. */
  publicNames: Map<string | number, string | undefined>;
}
const enumNames = new WeakMap<DescEnum, EnumNames>();
function namesOf(desc: DescEnum): EnumNames {
  let names = enumNames.get(desc);
  if (names === undefined) {
    const prefix = desc.sharedPrefix?.length ?? 0;
    names = { numbers: new Map(), publicNames: new Map() };
    for (const value of desc.values) {
      const publicName = value.number === 0 ? undefined : value.name.slice(prefix).toLowerCase();
      if (publicName !== undefined) names.numbers.set(publicName, value.number);
      names.publicNames.set(value.name, publicName);
      names.publicNames.set(value.number, publicName);
    }
    enumNames.set(desc, names);
  }
  return names;
}

/** A public enum name → its number; anything else is a programming error (callers send validated values). */
function enumNumber(desc: DescEnum, value: unknown, path: string): number {
  const number = typeof value === "string" ? namesOf(desc).numbers.get(value) : undefined;
  if (number === undefined) throw new TypeError(`${path}: ${JSON.stringify(value)} is not a value of ${desc.typeName}`);
  return number;
}

/** toJson's enum value (its proto name, or a number it does not know) → the public name; unknown numbers stay numbers. */
function publicEnum(desc: DescEnum, json: unknown): unknown {
  const names = namesOf(desc).publicNames;
  return names.has(json as string) ? names.get(json as string) : json;
}

// ---- Oneofs: flattened where the public shape names the oneof ----

/** A oneof of messages whose name the public value (or schema) uses as a key is flattened. */
const flattenable = (oneof: DescOneof) => oneof.fields.every((f) => f.fieldKind === "message");

// ---- Public value → proto JSON ----

/** A public value → the proto JSON fromJson reads: enums by number, flattened oneofs nested, Dates as ISO strings, undefined dropped. */
function messageJson(desc: DescMessage, value: unknown, path = ""): unknown {
  if (desc.typeName === TIMESTAMP || desc.typeName === STRUCT || value === null || typeof value !== "object" || Array.isArray(value) || value instanceof Date) {
    return plainJson(value);
  }
  const input: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const oneof of desc.oneofs) {
    const chosen = input[oneof.localName];
    if (chosen === undefined || !flattenable(oneof) || desc.fields.some((f) => f.jsonName === oneof.localName)) continue;
    const member = oneof.fields.find((f) => f.name === chosen);
    if (member?.message === undefined)
      throw new TypeError(`${path}${oneof.localName}: ${JSON.stringify(chosen)} is not a member of ${desc.typeName}.${oneof.name}`);
    delete input[oneof.localName];
    const inner: Record<string, unknown> = {};
    for (const f of member.message.fields) {
      if (f.jsonName in input) {
        inner[f.jsonName] = input[f.jsonName];
        delete input[f.jsonName];
      }
    }
    input[member.jsonName] = inner;
  }
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(input)) {
    if (v === undefined) continue;
    const field = desc.fields.find((f) => f.jsonName === key);
    // A key the message lacks goes through as it is, for fromJson to refuse by name.
    out[key] = field === undefined ? plainJson(v) : fieldJson(field, v, `${path}${key}`);
  }
  return out;
}

function fieldJson(field: DescField, value: unknown, path: string): unknown {
  if (value === null) return null;
  switch (field.fieldKind) {
    case "enum":
      return enumNumber(field.enum, value, path);
    case "message":
      return messageJson(field.message, value, `${path}.`);
    case "list":
      if (!Array.isArray(value)) return plainJson(value);
      if (field.listKind === "enum") return value.map((v, i) => enumNumber(field.enum, v, `${path}.${i}`));
      if (field.listKind === "message") return value.map((v, i) => messageJson(field.message, v, `${path}.${i}.`));
      return plainJson(value);
    case "map":
      if (typeof value !== "object") return value;
      if (field.mapKind === "enum") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, enumNumber(field.enum, v, `${path}.${k}`)]));
      if (field.mapKind === "message") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, messageJson(field.message, v, `${path}.${k}.`)]));
      return plainJson(value);
    default:
      return plainJson(value);
  }
}

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
  if (desc.typeName === STRUCT) return json;
  const flattened = new Set<DescField>();
  for (const oneof of desc.oneofs) {
    if (!flattenable(oneof) || !hasKey(schema, oneof.localName)) continue;
    for (const member of oneof.fields) flattened.add(member);
    // Chosen before anything moves: a member's fields may share a name with another member.
    const member = oneof.fields.find((f) => json[f.jsonName] !== undefined);
    if (member === undefined) continue;
    const inner = json[member.jsonName] as Record<string, unknown>;
    delete json[member.jsonName];
    // The member's fields belong to the public object itself, so they are shaped by its schema.
    Object.assign(json, { [oneof.localName]: member.name }, shapeMessage(member.message!, inner, schema));
  }
  const shape = objectShape(schema, json);
  for (const field of desc.fields) {
    if (flattened.has(field)) continue;
    const key = field.jsonName;
    const child = shape?.[key];
    let value = json[key];
    if (field.fieldKind === "enum") {
      value = publicEnum(field.enum, value);
      if (value === undefined) delete json[key];
    }
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
  return inSchemaOrder(json, shape);
}

/**
 * The object with its keys in the schema's order, as zod's parse would build it (toJson gives
 * proto field order, and filled-in nulls and flattened oneofs come last); keys the schema lacks
 * follow in the order they came, for the receiver to refuse.
 */
function inSchemaOrder(json: Record<string, unknown>, shape: Record<string, z.ZodType> | undefined): Record<string, unknown> {
  if (shape === undefined) return json;
  const ordered: Record<string, unknown> = {};
  for (const key of Object.keys(shape)) if (Object.hasOwn(json, key)) ordered[key] = json[key];
  for (const key of Object.keys(json)) if (!Object.hasOwn(ordered, key)) ordered[key] = json[key];
  return ordered;
}

function shapeField(field: DescField, value: unknown, schema: z.ZodType | undefined): unknown {
  // An unspecified element of a list has no absent form: null, which the schema refuses by index.
  if (field.fieldKind === "list" && field.listKind === "enum") return (value as unknown[]).map((v) => publicEnum(field.enum, v) ?? null);
  if (field.fieldKind === "map" && field.mapKind === "enum") {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, publicEnum(field.enum, v) ?? null]));
  }
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

/** Whether the public object (any option of a union) has this key. */
function hasKey(schema: z.ZodType | undefined, key: string): boolean {
  const s = unwrap(schema);
  if (s === undefined) return false;
  const def = defOf(s);
  if (def.type === "object") return def.shape !== undefined && key in def.shape;
  if (def.type === "union") return (def.options ?? []).some((option) => hasKey(option, key));
  return false;
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

// ---- On the wire: public values straight to bytes and back ----

/** One RPC's public shapes: what its caller sends (validated by the service) and what it answers. */
export interface MethodContract {
  request: z.ZodType;
  response: z.ZodType;
}

/**
 * A request whose message arrived but has no public form (a Timestamp outside RFC 3339's years, a
 * NaN in a Struct): carried to the handler path, which refuses it after the credential check, as
 * a failure there is answered (a logged, counted status with its details).
 */
class Unreadable {
  constructor(readonly reason: unknown) {}
}

/**
 * The public shapes of one RPC's contract entry, to bytes and back; unvalidated both ways. Decoding
 * never validates: grpc-js would answer a throwing deserializer with INTERNAL, before the caller's
 * credential was even checked, so the trust boundary validates in its handler path instead.
 */
export function publicCodecs(method: DescMethod, contract: MethodContract): MethodCodecs {
  return {
    request: {
      encode: (value) => bytesOf(toBinary(method.input, toWire(method.input, value))),
      decode: (bytes) => {
        const message = fromBinary(method.input, bytes);
        try {
          return wireValue(contract.request, method.input, message);
        } catch (err) {
          return new Unreadable(err);
        }
      },
    },
    response: {
      encode: (value) => bytesOf(toBinary(method.output, toWire(method.output, value))),
      decode: (bytes) => wireValue(contract.response, method.output, fromBinary(method.output, bytes)),
    },
  };
}

// ---- Whole services through the bridge ----

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
 * its public shape (publicCodecs), is validated here with the contract's schema (a refusal names the
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
