/**
 * Every RPC of every service through the bridge: each method's sample request goes public → proto
 * → bytes → proto → public (as the service reads it) and its sample response the other way (as
 * the gateway reads it), and both must come back equal and valid by the public zod schemas. The
 * test iterates the service descriptors, so a new RPC without a contract and a sample fails here.
 */
import * as memoryV1 from "@3ngram/proto/memory/v1";
import { ArchiveService, FactSchema, MemoriesService, ProposalsService, memoryServices } from "@3ngram/proto/memory/v1";
import { SearchService } from "@3ngram/proto/search/v1";
import {
  bridgeClient,
  bridgeClients,
  bridgeHandlers,
  fromWire,
  parseWire,
  publicCodecs,
  toWire,
  type AnyService,
  type CallContext,
  type MethodContract,
  type RpcMethods,
  type ServedMethod,
} from "@3ngram/rpc";
import { factRecordSchema, memoryContracts, searchContract, type ImportPart } from "@3ngram/schema";
import { fromBinary, isFieldSet, toBinary, type DescMessage, type DescMethod, type Message } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { archiveSamples, compactSearchResponse, memorySamples, searchSamples } from "./samples.js";

type Entries = Record<string, MethodContract | undefined>;
const services: Array<{ service: AnyService; contract: Entries; samples: typeof memorySamples }> = [
  ...Object.entries(memoryServices).map(([key, service]) => ({
    service,
    contract: memoryContracts[key as keyof typeof memoryContracts] as Entries,
    samples: key === "archive" ? archiveSamples : memorySamples,
  })),
  { service: SearchService, contract: searchContract as Entries, samples: searchSamples },
];

it("memoryServices names every service memory.v1 declares, so each is round-tripped below", () => {
  const declared = (Object.values(memoryV1) as unknown[])
    .filter((value): value is AnyService => typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "service")
    .map((service) => service.typeName)
    .sort();
  expect(declared.length).toBeGreaterThanOrEqual(8);
  expect(
    Object.values(memoryServices)
      .map((service) => service.typeName)
      .sort(),
  ).toEqual(declared);
});

/** Through bytes, as on the network. */
function overTheWire<D extends DescMessage>(desc: D, message: Message): Message {
  return fromBinary(desc, toBinary(desc, message as never));
}

/** The dotted paths of every field set in a message, nested messages and list elements included. */
function setPaths(desc: DescMessage, message: Message, prefix = "", into = new Set<string>()): Set<string> {
  for (const field of desc.fields) {
    if (!isFieldSet(message as never, field)) continue;
    const path = prefix + field.localName;
    into.add(path);
    // A oneof member lives under its oneof, as { case, value }.
    const holder = message as unknown as Record<string, unknown>;
    const value = field.oneof ? (holder[field.oneof.localName] as { value: unknown }).value : holder[field.localName];
    if (field.fieldKind === "message" && field.message.typeName !== "google.protobuf.Timestamp" && field.message.typeName !== "google.protobuf.Struct") {
      setPaths(field.message, value as Message, `${path}.`, into);
    } else if (field.fieldKind === "list" && field.listKind === "message" && field.message.typeName !== "google.protobuf.Timestamp") {
      for (const element of value as Message[]) setPaths(field.message, element, `${path}.`, into);
    }
  }
  return into;
}

/** Every field path a message type has (recursion stops at a type already on the path). */
function allPaths(desc: DescMessage, prefix = "", seen: string[] = []): string[] {
  if (seen.includes(desc.typeName)) return [];
  return desc.fields.flatMap((field) => {
    const path = prefix + field.localName;
    const nested = field.fieldKind === "message" || (field.fieldKind === "list" && field.listKind === "message") ? field.message : undefined;
    if (nested === undefined || nested.typeName.startsWith("google.protobuf.")) return [path];
    return [path, ...allPaths(nested, `${path}.`, [...seen, desc.typeName])];
  });
}

function requestRoundTrip(method: DescMethod, contract: MethodContract, request: unknown): Message {
  const wire = overTheWire(method.input, toWire(method.input, request));
  expect(parseWire(contract.request, method.input, wire as never)).toEqual(contract.request.parse(request));
  // Straight to bytes and back, as a peer sends it and a bridged service reads it.
  const { request: codec } = publicCodecs(method, contract);
  expect(contract.request.parse(codec.decode(codec.encode(request)))).toEqual(contract.request.parse(request));
  return wire;
}

for (const { service, contract, samples } of services) {
  describe(`${service.typeName} through the bridge`, () => {
    for (const method of service.methods) {
      const name = `${service.name}.${method.name}`;
      const entry = contract[method.localName];
      it(`${name}: request and response round-trip, every field covered`, () => {
        expect(entry, `a contract entry for ${name}`).toBeDefined();
        const sample = samples[method.localName];
        expect(sample, `a sample for ${name}`).toBeDefined();
        const { request, response, more = [], moreResponses = [] } = sample!;

        const requestPaths = new Set<string>();
        for (const r of [request, ...more]) setPaths(method.input, requestRoundTrip(method, entry!, r), "", requestPaths);
        expect([...requestPaths].sort()).toEqual(allPaths(method.input).sort());

        const responsePaths = new Set<string>();
        for (const r of [response, ...moreResponses]) {
          const wire = overTheWire(method.output, toWire(method.output, r));
          const out = fromWire(entry!.response, method.output, wire as never);
          // Valid by the public (strict) schema, and equal to what the domain answered.
          expect(entry!.response.parse(out)).toEqual(out);
          expect(out).toEqual(entry!.response.parse(r));
          // Straight to bytes and back, as a bridged service answers and a peer reads it: the same
          // value with every object's keys in the schema's order, as the schema's parse prints it.
          const { response: codec } = publicCodecs(method, entry!);
          expect(JSON.stringify(codec.decode(codec.encode(r)))).toBe(JSON.stringify(entry!.response.parse(r)));
          setPaths(method.output, wire, "", responsePaths);
        }
        expect([...responsePaths].sort()).toEqual(allPaths(method.output).sort());
      });
    }
  });
}

describe("streams through the bridge, one message at a time", () => {
  const ctx = {} as CallContext;
  const collect = async <T>(source: AsyncIterable<T>): Promise<T[]> => {
    const out: T[] = [];
    for await (const value of source) out.push(value);
    return out;
  };
  /** A bridged handler as RpcServer runs it: what it reads and answers goes through its codecs. */
  const served = (handler: unknown) => handler as ServedMethod;
  /** A value through a codec and back, as over the network. */
  const overBytes = (codec: ServedMethod["codecs"]["request"], value: unknown) => codec.decode(codec.encode(value));

  it("a client stream: the service reads each message validated, in order, as the caller sent it", async () => {
    const seen: ImportPart[] = [];
    const { codecs, handler } = served(
      bridgeHandlers(ArchiveService, memoryContracts.archive, {
        import: async (parts) => {
          for await (const part of parts) seen.push(part);
          return { format: "3ngram", results: [], created: 0, skipped: 0, failed: 0 };
        },
      }).import,
    );
    const sent = [{ options: {} }, { ndjson: '{"kind":' }, { ndjson: '"scope"}\n' }];
    async function* wire() {
      for (const part of sent) yield overBytes(codecs.request, part);
    }
    const answer = overBytes(codecs.response, await handler(wire(), ctx));
    // The options' default applies, as the public schema says; the pieces arrive untouched.
    expect(seen).toEqual([{ options: { format: "3ngram" } }, { ndjson: '{"kind":' }, { ndjson: '"scope"}\n' }]);
    expect(answer).toMatchObject({ format: "3ngram", created: 0 });
  });

  it("a client stream refuses a bad message naming its field, before the next one is read", async () => {
    let read = 0;
    const { codecs, handler } = served(
      bridgeHandlers(ArchiveService, memoryContracts.archive, {
        import: async (parts) => {
          for await (const part of parts) void part;
          return { format: "3ngram", results: [], created: 0, skipped: 0, failed: 0 };
        },
      }).import,
    );
    async function* wire() {
      read += 1;
      yield overBytes(codecs.request, { options: { format: "csv" } });
      read += 1;
      yield overBytes(codecs.request, { ndjson: "{}" });
    }
    await expect(handler(wire(), ctx)).rejects.toMatchObject({ reason: "invalid_input", details: { field: "options.format" } });
    expect(read).toBe(1);
  });

  it("a server stream: each record the domain yields reaches the caller in its public shape", async () => {
    const records = [
      { record: { kind: "archive", format: "3ngram", version: 1, exportedAt: "2026-01-31T09:00:00.000Z" } },
      { record: { kind: "memory", key: "k", tags: [], validTo: null, commitment: null }, cursor: "c" },
    ];
    const { codecs, handler } = served(
      bridgeHandlers(ArchiveService, memoryContracts.archive, {
        export: async function* () {
          yield* records;
        },
      }).export,
    );
    const answers = handler(overBytes(codecs.request, {}), ctx) as AsyncIterable<unknown>;
    const received = (await collect(answers)).map((answer) => overBytes(codecs.response, answer));
    expect(received).toEqual(records);
    // Key order survives the Struct, so an exported line reads back byte for byte.
    expect(received.map((r) => JSON.stringify((r as { record: unknown }).record))).toEqual(records.map((r) => JSON.stringify(r.record)));
  });
});

describe("the bridge's generic rules", () => {
  const fact = {
    id: "f",
    subject: "s",
    predicate: "p",
    value: "v",
    confidence: null,
    validFrom: "2026-01-31T09:00:00.000Z",
    validTo: null,
    recordedAt: "2026-01-31T09:00:00.5Z",
    memoryId: null,
  };

  it("prints every timestamp as Date.toISOString does, fraction included", () => {
    const out = fromWire(factRecordSchema, FactSchema, toWire(FactSchema, fact));
    expect(out.validFrom).toBe("2026-01-31T09:00:00.000Z");
    expect(out.recordedAt).toBe("2026-01-31T09:00:00.500Z");
  });

  it("turns null into an absent field and an absent field back into null where the schema is nullable", () => {
    const wire = toWire(FactSchema, fact);
    expect(wire.confidence).toBeUndefined();
    expect(wire.validTo).toBeUndefined();
    expect(fromWire(factRecordSchema, FactSchema, wire)).toMatchObject({ confidence: null, validTo: null, memoryId: null });
  });

  it("writes a Date as its ISO instant", () => {
    expect(fromWire(factRecordSchema, FactSchema, toWire(FactSchema, { ...fact, validFrom: new Date("2026-03-01T00:00:00Z") })).validFrom).toBe(
      "2026-03-01T00:00:00.000Z",
    );
  });

  it("refuses a public field the message lacks instead of dropping it", () => {
    expect(() => toWire(FactSchema, { ...fact, closedAt: "2026-01-31T09:00:00.000Z" })).toThrow(/closedAt/);
  });

  it("reads a compact search hit as compact: no nulls filled in for the fields it leaves out", () => {
    const method = SearchService.method.search;
    const out = fromWire(searchContract.search.response, method.output, overTheWire(method.output, toWire(method.output, compactSearchResponse)) as never);
    expect(out).toEqual(searchContract.search.response.parse(compactSearchResponse));
    expect(out.hits[0]).toEqual({ id: compactSearchResponse.hits[0]!.id, memoryType: "decision", topic: "db", score: 0.9 });
  });

  it("reads an empty repeated field as absent where the public schema has no empty list", () => {
    const method = SearchService.method.search;
    const input = parseWire(searchContract.search.request, method.input, toWire(method.input, { query: "q" }));
    expect(input).not.toHaveProperty("memoryTypes");
    expect(input).not.toHaveProperty("projects");
  });

  it("leaves an empty list out where the public shape has none to show (factProposals)", () => {
    const method = ProposalsService.method.listProposals;
    const out = fromWire(
      memoryContracts.proposals.listProposals.response,
      method.output,
      toWire(method.output, { proposals: [], count: 0, factProposals: [] }),
    );
    expect(out).toEqual({ proposals: [], count: 0 });
  });

  it("builds a client's bridged calls once per client and contract", () => {
    const client = {} as RpcMethods<typeof MemoriesService>;
    const contract = memoryContracts.memories;
    expect(bridgeClient(MemoriesService, contract, client)).toBe(bridgeClient(MemoriesService, contract, client));
    expect(bridgeClient(MemoriesService, contract, client)).not.toBe(bridgeClient(MemoriesService, contract, {} as RpcMethods<typeof MemoriesService>));
    // A peer's clients are bridged service by service, with those same cached calls.
    const peer = { memories: client, proposals: {} as RpcMethods<typeof ProposalsService> };
    const bridged = bridgeClients(memoryServices, memoryContracts, peer);
    expect(Object.keys(bridged).sort()).toEqual(["memories", "proposals"]);
    expect(bridged.memories).toBe(bridgeClient(MemoriesService, contract, client));
  });

  it("names the field of an invalid request, as a trust boundary must", () => {
    const method = MemoriesService.method.resolve;
    const wire = toWire(method.input, { memoryId: "not-a-uuid", status: "resolved" });
    expect(() => parseWire(memoryContracts.memories.resolve.request, method.input, wire)).toThrow(
      expect.objectContaining({ reason: "invalid_input", details: { field: "memoryId" } }),
    );
  });
});
