/**
 * The fact extractors. The rules are pure functions of a memory's text, checked pattern by pattern;
 * the LLM extractor talks to a real HTTP server on loopback that speaks the chat-completions API.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PermanentJobError, failureCause } from "@3ngram/queue";
import { LlmFactExtractor, RULES_EXTRACTOR_NAME, RulesFactExtractor, createExtractor, extractFacts, slug } from "../src/extraction/index.js";

const facts = (topic: string, content: string, memoryType = "note") =>
  extractFacts({ memoryType, topic, content }).map((f) => `${f.subject} ${f.predicate} = ${f.value}`);

describe("rules extractor: numbers with units", () => {
  it("reads a lift: subject from the topic, the words before the number and the unit in the predicate", () => {
    expect(facts("Back squat", "Top set 98 kg today.")).toEqual(["back_squat top_set.weight_kg = 98"]);
    const [fact] = extractFacts({ memoryType: "fact", topic: "Back squat", content: "Top set 98 kg today." });
    expect(fact).toMatchObject({ confidence: 0.8, rationale: "rule:measure(kg)" });
  });

  it("keeps one measure per fact and drops numbers without a unit", () => {
    expect(facts("bench", "Top set 80 kg x 5, back-off sets 70kg.")).toEqual(["bench top_set.weight_kg = 80", "bench back_off_sets.weight_kg = 70"]);
    expect(facts("squat", "Did 5 sets of 3 reps.")).toEqual(["squat count_sets = 5", "squat count_reps = 3"]);
    expect(facts("misc", "We have 3 options and 12 candidates.")).toEqual([]);
  });

  it("normalises units and numbers", () => {
    expect(facts("api", "The p95 latency is 120 ms.")).toEqual(["api p95_latency.duration_ms = 120"]);
    expect(facts("run", "Ran 5,5 km in 31 minutes.")).toEqual(["run distance_km = 5.5", "run duration_min = 31"]);
    expect(facts("trip", "Flights cost $1,200 and the hotel €340.")).toEqual(["trip flights.price_usd = 1200", "trip hotel.price_eur = 340"]);
    expect(facts("cpu", "CPU usage peaked at 95% during the load test.")).toEqual(["cpu cpu_usage_peaked.ratio_pct = 95"]);
    expect(facts("weather", "Outside it was 21 °C.")).toEqual(["weather outside.temperature_c = 21"]);
    expect(facts("disk", "The volume holds 1.5 TB.")).toEqual(["disk volume_holds.size_tb = 1.5"]);
  });

  it("skips ambiguous scales and bare letters that are not units", () => {
    expect(facts("funding", "We raised $5 million.")).toEqual([]);
    expect(facts("growth", "We reached 10m users and 3k stars.")).toEqual([]);
  });

  it("does not read digits inside identifiers as numbers", () => {
    expect(facts("infra", "Upgraded node v20 on host web3.")).toEqual([]);
  });
});

describe("rules extractor: dates", () => {
  it("reads ISO and written dates, labelled by the words before them", () => {
    expect(facts("release", "The launch is on 2026-03-01.")).toEqual(["release launch.date = 2026-03-01"]);
    expect(facts("contract", "Renewal due 5 March 2026.")).toEqual(["contract renewal_due.date = 2026-03-05"]);
    expect(facts("visa", "Expires September 30, 2027.")).toEqual(["visa expires.date = 2027-09-30"]);
    expect(facts("misc", "On 2026-01-31 we shipped.")).toEqual(["misc date = 2026-01-31"]);
  });

  it("refuses impossible dates and does not read a date's digits as a measure", () => {
    expect(facts("misc", "Deadline 2026-02-30 is wrong.")).toEqual([]);
    expect(facts("trip", "Leaving 2026-07-04 with 23 kg of luggage.")).toEqual(["trip leaving.date = 2026-07-04", "trip weight_kg = 23"]);
  });
});

describe("rules extractor: X is Y statements", () => {
  it("reads a statement about a named thing", () => {
    expect(facts("Infra", "Our primary region is eu-west-1.")).toEqual(["infra primary_region = eu-west-1"]);
    expect(facts("stack", "The staging database is a Postgres 16 cluster.")).toEqual(["stack staging_database = Postgres 16 cluster"]);
    const [fact] = extractFacts({ memoryType: "fact", topic: "stack", content: "The build tool is Vite." });
    expect(fact).toMatchObject({ predicate: "build_tool", value: "Vite", confidence: 0.6, rationale: "rule:is-statement" });
  });

  it("skips pronouns, negations, plans, progressive verbs, questions and long clauses", () => {
    expect(facts("x", "It is fine.")).toEqual([]);
    expect(facts("x", "This is what we wanted.")).toEqual([]);
    expect(facts("x", "The cache is not warm.")).toEqual([]);
    expect(facts("x", "The plan is to ship on Friday.")).toEqual([]);
    expect(facts("x", "The team is working on it.")).toEqual([]);
    expect(facts("x", "Is the cache warm?")).toEqual([]);
    expect(facts("x", "The reason is that the vendor kept missing every single deadline we set.")).toEqual([]);
    expect(facts("x", "The cache, as far as we know, is cold.")).toEqual([]);
  });

  it("prefers the measure when a statement states one", () => {
    expect(facts("api", "The timeout is 30 s.")).toEqual(["api timeout.duration_s = 30"]);
  });
});

describe("rules extractor: the whole memory", () => {
  it("reads every sentence, keeps the first value per predicate, and finds nothing in plain prose", () => {
    expect(facts("Back squat", "Top set 98 kg.\nTop set 100 kg on the second try; the bar is Eleiko.")).toEqual([
      "back_squat top_set.weight_kg = 98",
      "back_squat bar = Eleiko",
    ]);
    expect(facts("payments", "We decided to use Stripe for card payments in the EU launch.")).toEqual([]);
  });

  it("falls back to a generic subject when the topic has no letters or digits, and slugs safely", () => {
    expect(facts("!!!", "Top set 50 kg.")).toEqual(["memory top_set.weight_kg = 50"]);
    expect(slug("Zürich  Office — Floor 3")).toBe("zürich_office_floor_3");
    expect(slug("a".repeat(70))).toBe("");
    expect(slug(`${"word ".repeat(20)}`).length).toBeLessThanOrEqual(64);
  });

  it("is the default extractor and names itself on every proposal", async () => {
    const extractor = createExtractor({ kind: "rules" });
    expect(extractor).toBeInstanceOf(RulesFactExtractor);
    expect(extractor.name).toBe(RULES_EXTRACTOR_NAME);
    expect(await extractor.extract({ memoryType: "note", topic: "bench", content: "Top set 80 kg." })).toHaveLength(1);
  });
});

describe("LLM extractor against an OpenAI-compatible server", () => {
  let server: Server;
  let baseUrl: string;
  const requests: Array<{ url: string; auth: string | undefined; body: Record<string, unknown> }> = [];
  let answer: { status: number; body: unknown } = { status: 200, body: {} };

  const completion = (content: string) => ({ choices: [{ index: 0, message: { role: "assistant", content } }] });

  beforeAll(async () => {
    server = createServer(async (req, res) => {
      requests.push({ url: req.url ?? "", auth: req.headers.authorization, body: JSON.parse(await readBody(req)) as Record<string, unknown> });
      res.writeHead(answer.status, { "content-type": "application/json" });
      res.end(JSON.stringify(answer.body));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const extractor = () => createExtractor({ kind: "llm", baseUrl, model: "tiny-model", apiKey: "sk-local", timeoutMs: 5_000 });

  it("sends the memory with the model and key, and reads the facts it answers", async () => {
    answer = {
      status: 200,
      body: completion(
        JSON.stringify({
          facts: [
            { subject: "Back Squat", predicate: "top_set.weight_kg", value: 98, confidence: 0.9 },
            { subject: "back squat", predicate: "top_set.weight_kg", value: "97" },
            { subject: "", predicate: "x", value: "y" },
            { predicate: "missing.subject", value: "1" },
            { subject: "back_squat", predicate: "Top Set.Reps", value: "3" },
          ],
        }),
      ),
    };
    const llm = extractor();
    expect(llm).toBeInstanceOf(LlmFactExtractor);
    expect(llm.name).toBe("llm/tiny-model");
    const found = await llm.extract({ memoryType: "fact", topic: "Back squat", content: "Top set 98 kg for 3." });
    expect(found).toEqual([
      { subject: "back_squat", predicate: "top_set.weight_kg", value: "98", confidence: 0.9, rationale: "model:llm/tiny-model" },
      { subject: "back_squat", predicate: "top_set.reps", value: "3", confidence: 0.5, rationale: "model:llm/tiny-model" },
    ]);
    const sent = requests.at(-1)!;
    expect(sent.url).toBe("/v1/chat/completions");
    expect(sent.auth).toBe("Bearer sk-local");
    expect(sent.body).toMatchObject({ model: "tiny-model", temperature: 0 });
    expect(JSON.stringify(sent.body.messages)).toContain("Top set 98 kg for 3.");
  });

  it("accepts a fenced JSON answer and an empty one", async () => {
    answer = { status: 200, body: completion('```json\n{"facts": [{"subject": "run", "predicate": "distance_km", "value": "5"}]}\n```') };
    expect(await extractor().extract({ memoryType: "note", topic: "run", content: "5 km" })).toHaveLength(1);
    answer = { status: 200, body: completion('{"facts": []}') };
    expect(await extractor().extract({ memoryType: "note", topic: "run", content: "nothing" })).toEqual([]);
  });

  it("retries on throttling and server errors, gives up at once on a refused request (the embeddings client's rule)", async () => {
    for (const status of [408, 409, 429, 503]) {
      answer = { status, body: { error: "busy" } };
      const err = await extractor()
        .extract({ memoryType: "note", topic: "t", content: "c" })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect(err).not.toBeInstanceOf(PermanentJobError);
      // Dead-lettered as an outage, so the sweep re-drives it once the provider is back.
      expect(failureCause(err)).toBe("unavailable");
    }
    answer = { status: 401, body: { error: "bad key" } };
    await expect(extractor().extract({ memoryType: "note", topic: "t", content: "c" })).rejects.toBeInstanceOf(PermanentJobError);
  });

  it("treats an unreadable answer as a transient failure", async () => {
    answer = { status: 200, body: completion("not json at all") };
    await expect(extractor().extract({ memoryType: "note", topic: "t", content: "c" })).rejects.toThrow(/malformed JSON/);
    answer = { status: 200, body: { nothing: true } };
    await expect(extractor().extract({ memoryType: "note", topic: "t", content: "c" })).rejects.toThrow(/without a completion/);
  });

  it("gives up on a server that does not answer within its timeout", async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const slow = createExtractor({ kind: "llm", baseUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1`, model: "m", timeoutMs: 200 });
      const err = await slow.extract({ memoryType: "note", topic: "t", content: "c" }).catch((e: unknown) => e);
      // A timeout is transient: an ordinary error the queue retries, never a permanent one.
      expect((err as Error).message).toMatch(/timed out after 200 ms/);
      expect(err).not.toBeInstanceOf(PermanentJobError);
      expect(failureCause(err)).toBe("unavailable");
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => resolve(body));
    req.on("error", reject);
  });
}
