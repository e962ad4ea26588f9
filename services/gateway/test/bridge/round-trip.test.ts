/**
 * Every RPC of every service through the bridge: each method's sample request goes public → proto
 * → bytes → proto → public (as the service reads it) and its sample response the other way (as
 * the gateway reads it), and both must come back equal and valid by the public zod schemas. The
 * test iterates the service descriptors, so a new RPC without a contract and a sample fails here.
 */
import { MemoryService } from "@3ngram/proto/memory/v1";
import { SearchService } from "@3ngram/proto/search/v1";
import { bridgeClient, fromWire, parseWire, toWire, type MethodContract, type RpcClient } from "@3ngram/rpc";
import { factRecordSchema, memoryContract, searchContract } from "@3ngram/schema";
import { FactSchema } from "@3ngram/proto/memory/v1";
import { fromBinary, isFieldSet, toBinary, type DescMessage, type DescMethod, type Message } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { compactSearchResponse, memorySamples, searchSamples } from "./samples.js";

const services = [
  { service: MemoryService, contract: memoryContract as Record<string, MethodContract | undefined>, samples: memorySamples },
  { service: SearchService, contract: searchContract as Record<string, MethodContract | undefined>, samples: searchSamples },
];

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
    // A oneof member lives under the oneof's name, as { case, value }.
    const holder = message as unknown as Record<string, { value?: unknown } | undefined>;
    const value = field.oneof === undefined ? holder[field.localName] : holder[field.oneof.localName]!.value;
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
          setPaths(method.output, wire, "", responsePaths);
        }
        expect([...responsePaths].sort()).toEqual(allPaths(method.output).sort());
      });
    }
  });
}

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
    const method = MemoryService.method.listProposals;
    const out = fromWire(memoryContract.listProposals.response, method.output, toWire(method.output, { proposals: [], count: 0, factProposals: [] }));
    expect(out).toEqual({ proposals: [], count: 0 });
  });

  it("builds a client's bridged calls once per client and contract", () => {
    const client = {} as RpcClient<typeof MemoryService>;
    expect(bridgeClient(MemoryService, memoryContract, client)).toBe(bridgeClient(MemoryService, memoryContract, client));
    expect(bridgeClient(MemoryService, memoryContract, client)).not.toBe(bridgeClient(MemoryService, memoryContract, {} as RpcClient<typeof MemoryService>));
  });

  it("names the field of an invalid request, as a trust boundary must", () => {
    const method = MemoryService.method.resolve;
    const wire = toWire(method.input, { memoryId: "not-a-uuid", status: "resolved" });
    expect(() => parseWire(memoryContract.resolve.request, method.input, wire)).toThrow(
      expect.objectContaining({ reason: "invalid_input", details: { field: "memoryId" } }),
    );
  });
});
