// Runs a TypeScript entry point (eval or benchmark) on Node 20, which cannot run TypeScript
// itself: Vite's module runner (installed for vitest) transforms it on the fly. The entry must
// export `main(argv): Promise<number>` (the exit code). Workspace packages it imports are the
// compiled ones, so build first.
import { resolve } from "node:path";
import { runnerImport } from "vite";

const [entry, ...args] = process.argv.slice(2);
if (!entry) {
  console.error("usage: node scripts/run-ts.mjs <file.ts> [args…]");
  process.exit(2);
}
try {
  const { module } = await runnerImport(resolve(entry), { configFile: false, logLevel: "error" });
  process.exitCode = await module.main(args);
} catch (err) {
  console.error(err);
  process.exitCode = 1;
}
