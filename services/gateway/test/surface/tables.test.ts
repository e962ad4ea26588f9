/**
 * The MCP surface's tables agree with each other and with what is registered: the tool catalog,
 * the annotations table, the jobs table behind the instructions, the cache-hint table, the
 * header allowlists, and the prompt templates. No server needed.
 */
import { SCOPES } from "@3ngram/rpc";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { KNOWN_MCP_METHODS, NONE_LABEL, OTHER_LABEL, mcpMethodLabel, mcpNameLabel } from "../../src/http/mcp-headers.js";
import { TOOL_ANNOTATIONS } from "../../src/mcp/annotations.js";
import { CACHE_HINTS, CATALOG_CACHE_TTL_MS, MEMORY_RESOURCE_CACHE_TTL_MS } from "../../src/mcp/cache.js";
import { MEMORY_RESOURCE_TEMPLATE, PROMPT_NAMES, TOOL_NAMES } from "../../src/mcp/catalog.js";
import { JOBS, SERVER_INSTRUCTIONS, SURFACE_RULES } from "../../src/mcp/jobs.js";
import { renderBriefingPrompt, renderDebriefPrompt } from "../../src/mcp/prompts.js";
import { TOOLS } from "../../src/mcp/server.js";
import { zodNodes } from "../../../../test/support/zod-nodes.js";

const registered = TOOLS.map((t) => t.name);

describe("the tool catalog", () => {
  it("names exactly the registered tools, each once, in one order (the catalog's is the one tools/list shows)", () => {
    expect(registered).toEqual([...TOOL_NAMES]);
    expect(new Set(registered).size).toBe(registered.length);
  });

  it("gives every tool a title and a description that says what, when and its bounds", () => {
    for (const tool of TOOLS) {
      expect(tool.title, tool.name).toBeTruthy();
      expect(tool.description.length, tool.name).toBeGreaterThan(150);
      expect(tool.description.length, tool.name).toBeLessThan(1100);
    }
  });

  it("requires a public scope of every tool, fail-closed", () => {
    for (const tool of TOOLS) {
      if (typeof tool.requiredScope === "string") expect([SCOPES.read, SCOPES.write], tool.name).toContain(tool.requiredScope);
      else expect(tool.requiredScope, tool.name).toBeTypeOf("function");
    }
  });
});

describe("the annotations table", () => {
  it("is what every registered tool carries, row for row", () => {
    expect(Object.keys(TOOL_ANNOTATIONS).sort()).toEqual([...registered].sort());
    for (const tool of TOOLS) expect(tool.annotations, tool.name).toEqual(TOOL_ANNOTATIONS[tool.name as keyof typeof TOOL_ANNOTATIONS]);
  });

  it("states all four hints explicitly for every tool", () => {
    for (const [name, hints] of Object.entries(TOOL_ANNOTATIONS)) {
      expect(Object.keys(hints).sort(), name).toEqual(["destructiveHint", "idempotentHint", "openWorldHint", "readOnlyHint"]);
      for (const value of Object.values(hints)) expect(value, name).toBeTypeOf("boolean");
    }
  });

  it("marks only configure_scope destructive: no memory write destroys memory data", () => {
    const destructive = Object.entries(TOOL_ANNOTATIONS)
      .filter(([, h]) => h.destructiveHint)
      .map(([n]) => n);
    expect(destructive).toEqual(["configure_scope"]);
    for (const name of ["remember", "revise", "resolve", "review_proposals"] as const) {
      expect(TOOL_ANNOTATIONS[name]).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    }
  });

  it("marks every tool that needs only memory:read read-only, and no tool open-world", () => {
    for (const tool of TOOLS) {
      const hints = TOOL_ANNOTATIONS[tool.name as keyof typeof TOOL_ANNOTATIONS];
      expect(hints.openWorldHint, tool.name).toBe(false);
      if (tool.requiredScope === SCOPES.read) expect(hints, tool.name).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true });
      if (hints.readOnlyHint) expect(tool.requiredScope, tool.name).toBe(SCOPES.read);
    }
  });
});

/** Paths of every object in a zod schema that would accept a key it does not declare. */
function nonStrictObjects(schema: unknown): string[] {
  const strict = (def: Record<string, unknown>) => (def.catchall as { _zod?: { def?: { type?: string } } } | undefined)?._zod?.def?.type === "never";
  return zodNodes(schema)
    .filter(({ def }) => def.type === "object" && !strict(def))
    .map(({ path }) => path);
}

describe("the output schemas", () => {
  it("parse strictly at every depth (the advertised openness is for clients; an unknown key we produce is a bug)", () => {
    for (const tool of TOOLS) expect(nonStrictObjects(tool.outputSchema), tool.name).toEqual([]);
  });

  it("(the walk finds a loose object wherever it sits)", () => {
    const loose = z.strictObject({ items: z.array(z.union([z.string(), z.object({ a: z.number() })])).optional(), ok: z.strictObject({}) });
    expect(nonStrictObjects(loose)).toEqual(["$.items[]|1"]);
  });
});

describe("the jobs table and the instructions", () => {
  it("has one job per registered tool", () => {
    expect(JOBS.map((j) => j.tool).sort()).toEqual([...registered].sort());
  });

  it("builds the instructions from the table: every job and tool in order, then the rules", () => {
    const lines = SERVER_INSTRUCTIONS.split("\n");
    expect(lines).toHaveLength(1 + JOBS.length + SURFACE_RULES.length);
    JOBS.forEach((job, i) => {
      expect(lines[1 + i]).toBe(`- ${job.job}: ${job.tool}, ${job.when}.`);
    });
    expect(lines.slice(1 + JOBS.length)).toEqual(SURFACE_RULES);
  });

  it("stays compact: it rides along on every turn, next to the tool descriptions", () => {
    expect(SERVER_INSTRUCTIONS.length).toBeLessThan(2000);
  });
});

describe("the cache-hint table", () => {
  it("lists every cacheable method explicitly: the catalog public for an hour, memory bodies private for a day", () => {
    expect(Object.keys(CACHE_HINTS).sort()).toEqual([
      "prompts/list",
      "resources/list",
      "resources/read",
      "resources/templates/list",
      "server/discover",
      "tools/list",
    ]);
    for (const method of ["server/discover", "tools/list", "prompts/list", "resources/templates/list", "resources/list"] as const) {
      expect(CACHE_HINTS[method], method).toEqual({ ttlMs: CATALOG_CACHE_TTL_MS, cacheScope: "public" });
    }
    expect(CACHE_HINTS["resources/read"]).toEqual({ ttlMs: MEMORY_RESOURCE_CACHE_TTL_MS, cacheScope: "private" });
    expect(CATALOG_CACHE_TTL_MS).toBe(3_600_000);
    expect(MEMORY_RESOURCE_CACHE_TTL_MS).toBe(86_400_000);
  });
});

describe("Mcp-Method / Mcp-Name reduction", () => {
  it("keeps known methods and reduces anything else to other, an absent header to none", () => {
    for (const method of KNOWN_MCP_METHODS) expect(mcpMethodLabel(method)).toBe(method);
    expect(mcpMethodLabel("tools/delete")).toBe(OTHER_LABEL);
    expect(mcpMethodLabel("TOOLS/CALL")).toBe(OTHER_LABEL);
    expect(mcpMethodLabel(["tools/call", "tools/list"])).toBe(OTHER_LABEL);
    expect(mcpMethodLabel(undefined)).toBe(NONE_LABEL);
  });

  it("keeps registered tool and prompt names, and never a resource URI's id", () => {
    for (const name of TOOL_NAMES) expect(mcpNameLabel("tools/call", name)).toBe(name);
    for (const name of PROMPT_NAMES) expect(mcpNameLabel("prompts/get", name)).toBe(name);
    expect(mcpNameLabel("tools/call", "debrief")).toBe(OTHER_LABEL);
    expect(mcpNameLabel("prompts/get", "remember")).toBe(OTHER_LABEL);
    expect(mcpNameLabel("tools/call", "x".repeat(500))).toBe(OTHER_LABEL);
    expect(mcpNameLabel("resources/read", "threengram://memory/0190c0de-0000-7000-8000-000000000001")).toBe(MEMORY_RESOURCE_TEMPLATE);
    expect(mcpNameLabel("resources/read", "file:///etc/passwd")).toBe(OTHER_LABEL);
    expect(mcpNameLabel("tools/list", "remember")).toBe(OTHER_LABEL);
    expect(mcpNameLabel("tools/call", undefined)).toBe(NONE_LABEL);
  });
});

describe("the prompt templates", () => {
  it("briefing renders a call with an explicit selector for every kind", () => {
    expect(renderBriefingPrompt({ selector: "all" })).toContain('call the briefing tool with {"selector":{"kind":"all"},"mode":"brief"}');
    expect(renderBriefingPrompt({ selector: "project", mode: "full" })).toContain('{"selector":{"kind":"project","project":"<your-project>"},"mode":"full"}');
    expect(renderBriefingPrompt({ selector: "scope_project" })).toContain('"kind":"scope_project","scope":"<your-scope>","project":"<your-project>"');
    expect(renderBriefingPrompt({ selector: "all" })).not.toContain("placeholders");
  });

  it("briefing carries the last cursor as since when given, and always says to keep the new one", () => {
    const resumed = renderBriefingPrompt({ selector: "scope", since: "eyJ2IjoxfQ.c2ln" });
    expect(resumed).toContain('{"selector":{"kind":"scope","scope":"<your-scope>"},"mode":"brief","since":"eyJ2IjoxfQ.c2ln"}');
    expect(resumed).toMatch(/only what changed since your last briefing/);
    expect(renderBriefingPrompt({ selector: "all" })).not.toContain('"since"');
    for (const text of [resumed, renderBriefingPrompt({ selector: "all" }), renderDebriefPrompt({ scope: "work" })]) expect(text).toContain("changesCursor");
  });

  it("debrief names the scope when given, and the tools to call", () => {
    const scoped = renderDebriefPrompt({ scope: "work" });
    expect(scoped).toContain('under scope "work"');
    for (const word of ["remember", "revise", "resolve", '"decision"', '"commitment"', '"blocker"', "dueAt", "secrets"]) expect(scoped).toContain(word);
    expect(renderDebriefPrompt({})).toContain('default "personal"');
  });
});
