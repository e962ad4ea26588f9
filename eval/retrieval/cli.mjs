// Entry point for `npm run eval:retrieval`. Node 20 cannot run TypeScript directly, so Vite's
// module runner (already installed for vitest) transforms run.ts on the fly; the workspace
// packages it imports are the compiled ones, so build first (the npm script does).
import { fileURLToPath } from "node:url";
import { runnerImport } from "vite";

const entry = fileURLToPath(new URL("./run.ts", import.meta.url));
try {
  const { module } = await runnerImport(entry, { configFile: false, logLevel: "error" });
  process.exitCode = await module.main(process.argv.slice(2));
} catch (err) {
  console.error(err);
  process.exitCode = 1;
}
