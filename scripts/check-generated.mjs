// Fails when proto/src/gen differs from what `buf generate` produces now, so a .proto edit
// without regenerating (or a hand edit of generated code) cannot land.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const protoDir = fileURLToPath(new URL("../proto/", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "3ngram-gen-"));

function listFiles(root) {
  const out = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else out.push(relative(root, path));
    }
  };
  walk(root);
  return out.sort();
}

try {
  execFileSync("npx", ["buf", "generate", "-o", scratch], { cwd: protoDir, stdio: "inherit" });
  const fresh = join(scratch, "src/gen");
  const committed = join(protoDir, "src/gen");
  const freshFiles = listFiles(fresh);
  const committedFiles = listFiles(committed);
  const stale = [];
  for (const f of new Set([...freshFiles, ...committedFiles])) {
    const a = freshFiles.includes(f) ? readFileSync(join(fresh, f), "utf8") : null;
    const b = committedFiles.includes(f) ? readFileSync(join(committed, f), "utf8") : null;
    if (a !== b) stale.push(f);
  }
  if (stale.length > 0) {
    console.error(`generated code is stale (run \`make gen\`): ${stale.join(", ")}`);
    process.exit(1);
  }
  console.log(`generated code is current (${freshFiles.length} files)`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
