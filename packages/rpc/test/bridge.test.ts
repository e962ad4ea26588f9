/**
 * The bridge's generic enum and oneof rules (docs/adr/0034), on the real contracts: every value of
 * every enum reads and writes as its public name, a number a foreign client made up or the zero
 * value on a required field is refused naming the field, and a flattened oneof reads as the public
 * selector shape. Through bytes, as on the network.
 */
import { create, fromBinary, toBinary, type DescEnum, type DescField, type DescFile, type DescMessage, type Message } from "@bufbuild/protobuf";
import { MemoryType } from "@3ngram/proto/common/v1/memory";
import { memoryServices, BriefingRequestSchema, OrientationSelectorSchema, RememberRequestSchema, ReviseRequestSchema } from "@3ngram/proto/memory/v1";
import { SearchRequestSchema, SearchService } from "@3ngram/proto/search/v1";
import { AppError } from "@3ngram/errors";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { fromWire, parseWire, toWire } from "../src/index.js";

function overTheWire<D extends DescMessage>(desc: D, message: Message): Message {
  return fromBinary(desc, toBinary(desc, message as never));
}

/** Every file the services are declared in, and every file those import (each service context has its own). */
function filesOf(roots: readonly DescFile[]): DescFile[] {
  const seen = new Set<DescFile>();
  const visit = (file: DescFile) => {
    if (seen.has(file)) return;
    seen.add(file);
    file.dependencies.forEach(visit);
  };
  roots.forEach(visit);
  return [...seen];
}

/** Every message of the contracts, nested ones included. */
function messagesOf(files: readonly DescFile[]): DescMessage[] {
  const all: DescMessage[] = [];
  const walk = (desc: DescMessage) => {
    all.push(desc);
    desc.nestedMessages.forEach(walk);
  };
  for (const file of files) file.messages.forEach(walk);
  // google.protobuf's own enums (Struct's NullValue) are the well-known types' business.
  return all.filter((desc) => !desc.typeName.startsWith("google."));
}
const messages = messagesOf(filesOf([...Object.values(memoryServices), SearchService].map((service) => service.file)));
const enumFields = messages.flatMap((desc) =>
  desc.fields
    .filter((f): f is DescField & { enum: DescEnum } => f.fieldKind === "enum" || (f.fieldKind === "list" && f.listKind === "enum"))
    .map((field) => ({ desc, field })),
);

const publicName = (desc: DescEnum, number: number) => desc.value[number]!.name.slice(desc.sharedPrefix!.length).toLowerCase();

/** What a refused input throws: invalid_input naming the field. */
function refusal(run: () => unknown): AppError {
  try {
    run();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error("expected a refusal");
}

const memoryType = z.enum(["decision", "commitment", "blocker", "fact", "preference", "pattern", "note", "event"]);
const rememberRequest = z.strictObject({ memoryType, topic: z.string(), content: z.string(), tags: z.array(z.string()), facts: z.array(z.unknown()) });

describe("enums through the bridge", () => {
  it("finds the contracts' enum fields, each enum following the naming rule", () => {
    expect(enumFields.length).toBeGreaterThan(40);
    // The walk reaches the files of every context, not only memory.proto's messages.
    const enums = new Set(enumFields.map(({ field }) => field.enum.typeName));
    for (const name of ["common.v1.MemoryType", "memory.v1.ErasureReason", "memory.v1.ClientRegistration", "search.v1.SimilarityBand"])
      expect(enums).toContain(name);
    for (const { field } of enumFields) {
      expect(field.enum.sharedPrefix, field.enum.typeName).toBeDefined();
      expect(field.enum.values[0]!.number, field.enum.typeName).toBe(0);
      expect(field.enum.values[0]!.name, field.enum.typeName).toMatch(/_UNSPECIFIED$/);
    }
  });

  it("writes and reads every value of every enum field as its public name", () => {
    for (const { desc, field } of enumFields) {
      if (field.oneof !== undefined) continue;
      for (const value of field.enum.values.filter((v) => v.number !== 0)) {
        const name = publicName(field.enum, value.number);
        const json = field.fieldKind === "list" ? [name] : name;
        const wire = overTheWire(desc, toWire(desc, { [field.jsonName]: json }));
        const held = (wire as unknown as Record<string, unknown>)[field.localName];
        expect(held, `${desc.typeName}.${field.name} = ${value.name}`).toEqual(field.fieldKind === "list" ? [value.number] : value.number);
        const out = fromWire(z.unknown(), desc, wire as never) as Record<string, unknown>;
        expect(out[field.jsonName], `${desc.typeName}.${field.name} = ${value.name}`).toEqual(json);
      }
    }
  });

  it("spells the public names the public schemas use", () => {
    expect(MemoryType[MemoryType.NOTE]).toBe("NOTE");
    const values = RememberRequestSchema.field.memoryType!.enum!.values.filter((v) => v.number !== 0);
    expect(values.map((v) => publicName(v.parent, v.number))).toEqual(memoryType.options);
  });

  it("reads the zero value as absent: null where the schema is nullable, left out where optional", () => {
    const wire = overTheWire(ReviseRequestSchema, create(ReviseRequestSchema, { edgeIntent: 0 }));
    expect(fromWire(z.strictObject({ edgeIntent: z.enum(["supersedes", "updates"]).nullable() }).partial(), ReviseRequestSchema, wire as never)).toMatchObject({
      edgeIntent: null,
    });
    const out = fromWire(z.unknown(), ReviseRequestSchema, wire as never) as Record<string, unknown>;
    expect(out).not.toHaveProperty("edgeIntent");
    expect(out).not.toHaveProperty("memoryType");
  });

  it("refuses a number the contract does not know, from a foreign client, naming the field", () => {
    const wire = overTheWire(RememberRequestSchema, create(RememberRequestSchema, { memoryType: 99 as MemoryType, topic: "t", content: "c" }));
    const err = refusal(() => parseWire(rememberRequest, RememberRequestSchema, wire as never));
    expect(err.reason).toBe("invalid_input");
    expect(err.details.field).toBe("memoryType");
  });

  it("refuses an unknown number inside a list by its index", () => {
    const wire = overTheWire(SearchRequestSchema, create(SearchRequestSchema, { memoryTypes: [MemoryType.NOTE, 42 as MemoryType] }));
    const err = refusal(() => parseWire(z.strictObject({ memoryTypes: z.array(memoryType) }).partial(), SearchRequestSchema, wire as never));
    expect(err.details.field).toBe("memoryTypes.1");
  });

  it("refuses the zero value on a required field as missing, naming the field", () => {
    const wire = overTheWire(RememberRequestSchema, create(RememberRequestSchema, { memoryType: MemoryType.UNSPECIFIED, topic: "t", content: "c" }));
    const err = refusal(() => parseWire(rememberRequest, RememberRequestSchema, wire as never));
    expect(err.reason).toBe("invalid_input");
    expect(err.details.field).toBe("memoryType");
  });

  it("refuses to write a public name the enum lacks (a programming error), naming the field", () => {
    expect(() => toWire(RememberRequestSchema, { memoryType: "gossip", topic: "t", content: "c" })).toThrow(/memoryType: "gossip"/);
    expect(() => toWire(SearchRequestSchema, { memoryTypes: ["note", "MEMORY_TYPE_NOTE"] })).toThrow(/memoryTypes\.1/);
  });
});

describe("a oneof the public shape names, flattened", () => {
  const selector = z
    .strictObject({ kind: z.enum(["all", "scope", "project", "scope_project"]), scope: z.string(), project: z.string(), includeUnscoped: z.boolean() })
    .partial();
  const briefing = z.strictObject({ selector }).partial();

  it("writes each kind as its member and reads it back flat", () => {
    for (const kind of [
      { kind: "all" },
      { kind: "scope", scope: "work" },
      { kind: "project", project: "atlas" },
      { kind: "scope_project", scope: "work", project: "atlas", includeUnscoped: true },
    ]) {
      const wire = overTheWire(OrientationSelectorSchema, toWire(OrientationSelectorSchema, kind));
      expect((wire as unknown as { kind: { case: string } }).kind.case).toBe(kind.kind === "scope_project" ? "scopeProject" : kind.kind);
      expect(fromWire(selector, OrientationSelectorSchema, wire as never)).toEqual(kind);
    }
  });

  it("reads a member's absent optional field as absent", () => {
    const wire = toWire(OrientationSelectorSchema, { kind: "scope_project", scope: "work", project: "atlas" });
    expect(fromWire(selector, OrientationSelectorSchema, wire)).toEqual({ kind: "scope_project", scope: "work", project: "atlas" });
  });

  it("reads an unset oneof as no kind, which a schema requiring one refuses by name", () => {
    const wire = overTheWire(BriefingRequestSchema, create(BriefingRequestSchema, { selector: {} }));
    const err = refusal(() => parseWire(z.strictObject({ selector: selector.required({ kind: true }) }).partial(), BriefingRequestSchema, wire as never));
    expect(err.details.field).toBe("selector.kind");
    expect(fromWire(briefing, BriefingRequestSchema, wire as never)).toEqual({ selector: {}, sections: [] });
  });

  it("refuses to write a kind the oneof lacks", () => {
    expect(() => toWire(OrientationSelectorSchema, { kind: "everything" })).toThrow(/kind: "everything"/);
  });
});
