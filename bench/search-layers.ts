/**
 * `bench:search --layers`: what each layer in front of the search service adds to one search, all
 * measured in one run with the queries interleaved (one query per layer in turn), so every layer
 * sees the same moments of the machine and the differences between them are its share:
 *
 *   gRPC          the search service through the peer the gateway holds (bridge, protobuf, HTTP/2)
 *   REST          + the gateway's HTTP stack: Express, rate limits, the API key, JSON in and out
 *   MCP, HTTP     + the MCP server SDK: the same tools/call the official client sends, posted with fetch
 *   MCP, client   + the official MCP client: its request building and its checks of the answer
 *
 * The plain-HTTP request is the one the official client itself sent, recorded from its transport
 * (headers and protocol version included), with only the query and the JSON-RPC id changed.
 */
import { performance } from "node:perf_hooks";
import { connectMcp } from "../test/support/mcp.js";
import { percentiles, type Percentiles } from "./stats.js";

export const LAYERS = ["gRPC", "REST", "MCP, HTTP", "MCP, client"] as const;
export type Layer = (typeof LAYERS)[number];

/** Unmeasured rounds first, so each layer's code (REST's, the plain-HTTP path's) runs optimised like the others'. */
const WARMUP_ROUNDS = 50;

/** How many distinct query texts measureLayers needs for `rounds` measured rounds. */
export function layerQueryCount(rounds: number): number {
  return (WARMUP_ROUNDS + rounds) * LAYERS.length;
}

export interface LayerTargets {
  gatewayUrl: string;
  apiKey: string;
  /** One search through the search service's peer, as the gateway makes it. */
  grpcSearch: (query: string) => Promise<unknown>;
}

/** A tools/call request as the official client sent it: where, and with which headers and body. */
interface RecordedCall {
  url: string;
  headers: Record<string, string>;
  body: { jsonrpc: "2.0"; id: number | string; method: "tools/call"; params: { name: string; arguments: Record<string, unknown> } };
}

/** Runs `rounds` rounds of one query per layer (each query text used once) and answers each layer's percentiles. */
export async function measureLayers(targets: LayerTargets, queries: readonly string[], rounds: number): Promise<Record<Layer, Percentiles>> {
  if (queries.length < layerQueryCount(rounds)) throw new Error(`measureLayers needs ${layerQueryCount(rounds)} distinct queries`);
  let recorded: RecordedCall | undefined;
  const recordingFetch: typeof fetch = (input, init) => {
    if (recorded === undefined && typeof init?.body === "string" && init.body.includes('"tools/call"')) {
      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((value, name) => (headers[name] = value));
      recorded = { url: String(input), headers, body: JSON.parse(init.body) };
    }
    return fetch(input, init);
  };
  const mcp = await connectMcp(`${targets.gatewayUrl}/mcp`, targets.apiKey, { modern: true, fetch: recordingFetch });
  const search = (query: string) => mcp.call("search", { query, limit: 5 });
  try {
    await search("layers: recording the client's request");
    const call = recorded;
    if (call === undefined) throw new Error("the MCP client sent no tools/call to record");
    let nextId = 1_000_000;
    const run: Record<Layer, (query: string) => Promise<unknown>> = {
      gRPC: targets.grpcSearch,
      REST: (query) =>
        answered(
          fetch(`${targets.gatewayUrl}/api/v1/search`, {
            method: "POST",
            headers: { authorization: `Bearer ${targets.apiKey}`, "content-type": "application/json" },
            body: JSON.stringify({ query, limit: 5 }),
          }),
        ),
      "MCP, HTTP": (query) =>
        answered(
          fetch(call.url, {
            method: "POST",
            headers: call.headers,
            body: JSON.stringify({ ...call.body, id: nextId++, params: { ...call.body.params, arguments: { query, limit: 5 } } }),
          }),
        ),
      "MCP, client": search,
    };
    const samples = Object.fromEntries(LAYERS.map((layer) => [layer, [] as number[]])) as Record<Layer, number[]>;
    const perLayer = WARMUP_ROUNDS + rounds;
    for (let round = 0; round < perLayer; round++) {
      for (const [index, layer] of LAYERS.entries()) {
        // Each layer takes its queries from its own consecutive block, so every layer gets the same
        // mix of the query list's kinds (which follow a pattern in the list's order).
        const query = queries[index * perLayer + round]!;
        const started = performance.now();
        await run[layer](query);
        if (round >= WARMUP_ROUNDS) samples[layer].push(performance.now() - started);
      }
    }
    return Object.fromEntries(LAYERS.map((layer) => [layer, percentiles(samples[layer])])) as Record<Layer, Percentiles>;
  } finally {
    await mcp.close();
  }
}

/** Reads the whole answer (as a client must) and refuses anything but a 200. */
async function answered(response: Promise<Response>): Promise<void> {
  const res = await response;
  const text = await res.text();
  if (res.status !== 200) throw new Error(`search answered ${res.status}`);
  if (text.includes('"isError":true')) throw new Error("the search tool answered an error");
}
