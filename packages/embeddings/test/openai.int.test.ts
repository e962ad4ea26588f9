import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";

import { createEmbedder } from "../src/create.js";
import { EmbeddingsError } from "../src/errors.js";
import { createOpenAIEmbedder, OpenAIEmbedder } from "../src/openai.js";

interface RecordedRequest {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingMessage["headers"];
  body: { model?: unknown; input?: unknown; dimensions?: unknown };
}

type Handler = (request: RecordedRequest, response: ServerResponse) => void;

const SECRET_TEXT = "my bank PIN is 4921 and my password is hunter2";
const API_KEY = "sk-test-very-secret-key";

let server: Server;
let baseUrl: string;
let handler: Handler;
const requests: RecordedRequest[] = [];

/** Replies like the OpenAI API: vector i is [i+1, 2, 0, ...] (not unit length), listed in reverse order. */
const fixedEmbeddings =
  (dimensions: number): Handler =>
  (request, response) => {
    const input = request.body.input as string[];
    const data = input
      .map((_, index) => {
        const embedding = new Array<number>(dimensions).fill(0);
        embedding[0] = index + 1;
        embedding[1] = 2;
        return { object: "embedding", index, embedding };
      })
      .reverse();
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ object: "list", data, model: request.body.model }));
  };

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const recorded: RecordedRequest = {
        method: req.method,
        url: req.url,
        headers: req.headers,
        body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as RecordedRequest["body"],
      };
      requests.push(recorded);
      handler(recorded, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  requests.length = 0;
  handler = fixedEmbeddings(4);
});

describe("OpenAIEmbedder", () => {
  it("posts model, input and dimensions with a bearer token and returns unit vectors in input order", async () => {
    const embedder = new OpenAIEmbedder({ baseUrl: `${baseUrl}/`, model: "test-model", apiKey: API_KEY, dimensions: 4 });
    expect(embedder.model).toBe("openai:test-model");
    expect(embedder.dimensions).toBe(4);
    // Every call goes over the network: search embeds a query before taking a database connection.
    expect(embedder.remote).toBe(true);

    const vectors = await embedder.embed(["first", "second"]);

    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(request!.method).toBe("POST");
    expect(request!.url).toBe("/v1/embeddings");
    expect(request!.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request!.headers["content-type"]).toBe("application/json");
    expect(request!.body).toEqual({ model: "test-model", input: ["first", "second"], dimensions: 4, encoding_format: "float" });

    // Server listed them in reverse; index 0 is [1, 2, 0, 0], index 1 is [2, 2, 0, 0].
    expect(vectors).toHaveLength(2);
    expect(vectors[0]![0]).toBeCloseTo(1 / Math.sqrt(5), 12);
    expect(vectors[0]![1]).toBeCloseTo(2 / Math.sqrt(5), 12);
    expect(vectors[1]![0]).toBeCloseTo(Math.SQRT1_2, 12);
    expect(vectors[1]![1]).toBeCloseTo(Math.SQRT1_2, 12);
  });

  it("omits the authorization header and dimensions field when not configured", async () => {
    const embedder = new OpenAIEmbedder({ baseUrl, model: "local-server-model", responseDimensions: 4 });
    await embedder.embed(["hello"]);
    expect(requests[0]!.headers.authorization).toBeUndefined();
    expect(requests[0]!.body).toEqual({ model: "local-server-model", input: ["hello"], encoding_format: "float" });
  });

  it("splits large inputs into batches and replaces empty strings", async () => {
    const embedder = new OpenAIEmbedder({ baseUrl, model: "m", dimensions: 4, batchSize: 2 });
    const vectors = await embedder.embed(["a", "", "c", "   ", "e"]);
    expect(vectors).toHaveLength(5);
    expect(requests.map((request) => request.body.input)).toEqual([["a", " "], ["c", " "], ["e"]]);
  });

  it("truncates very long inputs", async () => {
    const embedder = new OpenAIEmbedder({ baseUrl, model: "m", dimensions: 4 });
    await embedder.embed(["y".repeat(20_000)]);
    expect((requests[0]!.body.input as string[])[0]).toHaveLength(8000);
  });

  it("turns an HTTP 500 into an error that leaks neither the input nor the key", async () => {
    handler = (request, response) => {
      // A careless server that echoes the request back in its error body.
      response.writeHead(500, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          error: { message: `failed on ${JSON.stringify(request.body.input)} with ${API_KEY}`, type: "server_error" },
        }),
      );
    };
    const embedder = new OpenAIEmbedder({ baseUrl, model: "m", apiKey: API_KEY, dimensions: 4 });
    const error = await embedder.embed([SECRET_TEXT]).then(
      () => expect.unreachable("embed should have failed"),
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(EmbeddingsError);
    const embeddingsError = error as EmbeddingsError;
    expect(embeddingsError.status).toBe(500);
    expect(embeddingsError.retryable).toBe(true);
    expect(embeddingsError.message).toContain("HTTP 500");
    expect(embeddingsError.message).toContain("server_error");
    expect(embeddingsError.message).not.toContain("hunter2");
    expect(embeddingsError.message).not.toContain("4921");
    expect(embeddingsError.message).not.toContain(API_KEY);
    expect(JSON.stringify(embeddingsError)).not.toContain("hunter2");
  });

  it("marks client errors as not retryable", async () => {
    handler = (_request, response) => {
      response.writeHead(401, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: { message: "Incorrect API key provided", code: "invalid_api_key" } }));
    };
    const embedder = new OpenAIEmbedder({ baseUrl, model: "m", apiKey: API_KEY, dimensions: 4 });
    await expect(embedder.embed(["x"])).rejects.toMatchObject({
      name: "EmbeddingsError",
      status: 401,
      retryable: false,
      message: expect.stringContaining("invalid_api_key") as unknown,
    });
  });

  it("times out a hung request with an error that leaks neither the input nor the key", async () => {
    handler = () => {
      // Never answer.
    };
    const embedder = new OpenAIEmbedder({ baseUrl, model: "m", apiKey: API_KEY, dimensions: 4, timeoutMs: 150 });
    const started = Date.now();
    const error = (await embedder.embed([SECRET_TEXT]).catch((caught: unknown) => caught)) as EmbeddingsError;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(error).toBeInstanceOf(EmbeddingsError);
    expect(error.message).toMatch(/timed out after 150 ms/);
    expect(error.retryable).toBe(true);
    expect(error.message).not.toContain("hunter2");
    expect(error.message).not.toContain(API_KEY);
  });

  it("rejects with the caller's abort reason when the caller aborts", async () => {
    handler = () => {
      // Never answer.
    };
    const embedder = new OpenAIEmbedder({ baseUrl, model: "m", dimensions: 4 });
    const controller = new AbortController();
    const pending = embedder.embed(["x"], { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("caller gave up")), 50);
    await expect(pending).rejects.toThrow("caller gave up");
  });

  it("reports a refused connection without the input text", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));

    const embedder = new OpenAIEmbedder({ baseUrl: `http://127.0.0.1:${port}/v1`, model: "m", dimensions: 4 });
    const error = (await embedder.embed([SECRET_TEXT]).catch((caught: unknown) => caught)) as EmbeddingsError;
    expect(error).toBeInstanceOf(EmbeddingsError);
    expect(error.message).toContain("ECONNREFUSED");
    expect(error.message).not.toContain("hunter2");
  });

  it("rejects responses with the wrong size or count", async () => {
    handler = fixedEmbeddings(3);
    const wrongSize = new OpenAIEmbedder({ baseUrl, model: "m", dimensions: 4 });
    await expect(wrongSize.embed(["x"])).rejects.toThrow(/expected 4-dimensional vectors, got 3/);

    handler = (_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ data: [] }));
    };
    await expect(wrongSize.embed(["x"])).rejects.toThrow(/expected 1 embeddings, got 0/);

    handler = (_request, response) => {
      response.writeHead(200, { "content-type": "text/html" });
      response.end("<html>gateway</html>");
    };
    await expect(wrongSize.embed(["x"])).rejects.toThrow(/is invalid: missing `data` array/);
  });

  it("needs a known size: configured, well known, or probed", async () => {
    expect(() => new OpenAIEmbedder({ baseUrl, model: "mystery" })).toThrow(/output size .* unknown/);
    expect(new OpenAIEmbedder({ baseUrl, model: "text-embedding-3-small" }).dimensions).toBe(1536);
    expect(new OpenAIEmbedder({ baseUrl, model: "text-embedding-3-large", dimensions: 256 }).dimensions).toBe(256);

    handler = fixedEmbeddings(7);
    const probed = await createOpenAIEmbedder({ baseUrl, model: "mystery" });
    expect(probed.dimensions).toBe(7);
    expect(requests).toHaveLength(1);
    expect(requests[0]!.body).toEqual({ model: "mystery", input: ["dimension probe"], encoding_format: "float" });
  });

  it("validates the base URL", () => {
    expect(() => new OpenAIEmbedder({ baseUrl: "not a url", model: "m", dimensions: 4 })).toThrow(RangeError);
    expect(() => new OpenAIEmbedder({ baseUrl: "ftp://example.com", model: "m", dimensions: 4 })).toThrow(RangeError);
  });

  it("is built by createEmbedder from an openai config", async () => {
    const embedder = await createEmbedder({
      provider: "openai",
      baseUrl,
      model: "test-model",
      apiKey: API_KEY,
      dimensions: 4,
      timeoutMs: 1000,
    });
    expect(embedder.model).toBe("openai:test-model");
    const [vector] = await embedder.embed(["hi"]);
    expect(vector).toHaveLength(4);
    expect(requests[0]!.headers.authorization).toBe(`Bearer ${API_KEY}`);
  });
});
