import { createRedisQueueBackend } from "./dist/index.js";
import { spawn } from "node:child_process";
const port = 6391;
const b = createRedisQueueBackend({ redisUrl: `redis://127.0.0.1:${port}`, prefix: "x", onError: () => {} });
const attempt = async (label) => {
  const t0 = Date.now();
  const r = await Promise.race([
    b.queue.enqueue("q", "n", {}).then(() => "ok", (e) => "rejected: " + e.message),
    new Promise((r) => setTimeout(() => r("pending after 10s"), 10000)),
  ]);
  console.log(label, r, Date.now() - t0, "ms");
};
await attempt("down:");
const srv = spawn("redis-server", ["--port", String(port), "--save", "", "--appendonly", "no"], { stdio: "ignore" });
await new Promise((r) => setTimeout(r, 2500));
await attempt("up #1:");
await attempt("up #2:");
const seen = [];
const w = b.work("q", async (j) => { seen.push(j.id); });
await new Promise((r) => setTimeout(r, 500));
console.log("worker saw", seen);
srv.kill("SIGTERM");
await new Promise((r) => setTimeout(r, 800));
await attempt("down again:");
const srv2 = spawn("redis-server", ["--port", String(port), "--save", "", "--appendonly", "no"], { stdio: "ignore" });
await new Promise((r) => setTimeout(r, 2500));
await attempt("up again:");
await new Promise((r) => setTimeout(r, 2500));
console.log("worker saw", seen);
const t = Date.now();
await Promise.race([b.close(), new Promise((r) => setTimeout(r, 5000))]);
console.log("close", Date.now() - t);
srv2.kill("SIGTERM");
process.exit(0);
