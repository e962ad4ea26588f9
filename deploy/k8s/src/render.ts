/**
 * Renders the typed manifests to YAML under deploy/k8s/, or with --check fails when the committed
 * files differ from a fresh render (a source edit without `npm run k8s:render`, or a hand edit).
 */
import { mkdirSync, readFileSync, readdirSync, writeFileSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { renderAll } from "./yaml.js";

const root = fileURLToPath(new URL("../", import.meta.url));
const check = process.argv.includes("--check");
const rendered = renderAll();

if (check) {
  const stale: string[] = [];
  for (const [path, text] of rendered) {
    const full = join(root, path);
    if (!existsSync(full) || readFileSync(full, "utf8") !== text) stale.push(path);
  }
  // A rendered file that the sources no longer produce is stale too.
  for (const dir of new Set([...rendered.keys()].map((path) => dirname(path)))) {
    for (const name of readdirSync(join(root, dir))) {
      const path = dir === "." ? name : `${dir}/${name}`;
      if (name.endsWith(".yaml") && !rendered.has(path)) stale.push(`${path} (no longer rendered)`);
    }
  }
  if (stale.length > 0) {
    console.error(`Kubernetes manifests are stale (run \`npm run k8s:render\`): ${stale.join(", ")}`);
    process.exit(1);
  }
  console.log(`Kubernetes manifests are current (${rendered.size} files)`);
} else {
  for (const [path, text] of rendered) {
    const full = join(root, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, text);
  }
  console.log(`rendered ${rendered.size} files under deploy/k8s/`);
}
