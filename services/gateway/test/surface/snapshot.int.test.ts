/**
 * The committed surface snapshot (surface/snapshot.json) must equal what a client is served: the
 * instructions, every tool with its description, schemas and annotations, the prompts and the
 * resource template. A change to any of them fails here until the snapshot is regenerated with
 * `npm run surface:snapshot` and the diff is reviewed (and the tool-selection eval re-run).
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SURFACE_DIR, readLiveSurface } from "./live-surface.js";

describe("MCP surface snapshot", () => {
  it("matches the live surface (regenerate with npm run surface:snapshot)", async () => {
    const surface = await readLiveSurface();
    await expect(JSON.stringify(surface, null, 2) + "\n").toMatchFileSnapshot(join(SURFACE_DIR, "snapshot.json"));
  });
});
