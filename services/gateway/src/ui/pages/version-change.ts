/**
 * What one version of a memory said, shown against the version it replaced: the words removed and
 * added (word-diff.ts). The first version of a lineage has nothing before it, so its text is shown
 * whole. History hands every version's text (cut at the tool's content bound), so no extra read is
 * needed.
 */
import type { HistoryOutput, MemoryRecord } from "@3ngram/schema";
import { html, type Html } from "../../http/html.js";
import { wordDiff } from "../word-diff.js";

/**
 * The version each one replaced or updated, by id. Edges run from the newer memory to the older;
 * when a version took over from more than one (two lines merged), the most recently recorded of
 * them is the text it is compared with.
 */
export function predecessors(history: HistoryOutput): Map<string, MemoryRecord> {
  const byId = new Map(history.lineage.map((m) => [m.id, m]));
  const before = new Map<string, MemoryRecord>();
  for (const edge of history.edges) {
    const older = byId.get(edge.toId);
    if (older === undefined || !byId.has(edge.fromId)) continue;
    const known = before.get(edge.fromId);
    if (known === undefined || Date.parse(older.recordedAt) > Date.parse(known.recordedAt)) before.set(edge.fromId, older);
  }
  return before;
}

function cutNote(version: MemoryRecord, previous: MemoryRecord): Html {
  return version.truncated || previous.truncated
    ? html`<p class="muted">Only the beginning of a long text is shown and compared here; the memory's own page has all of it.</p>`
    : html``;
}

/** The change block under a version on the timeline; `previousNumber` names the version it is compared with. */
export function versionChange(version: MemoryRecord, previous: MemoryRecord | undefined, previousNumber: number | undefined): Html {
  if (version.erasedAt !== undefined || previous?.erasedAt !== undefined) {
    return html`<div class="change"><p class="muted">This text was erased, so there is nothing to compare.</p></div>`;
  }
  if (previous === undefined) {
    return html`<div class="change"><p class="muted">First written as:</p><p class="content diff">${version.content}${version.truncated ? " …" : ""}</p></div>`;
  }
  const against = `version ${previousNumber ?? "?"}`;
  const content = wordDiff(previous.content, version.content);
  const topic = previous.topic === version.topic ? undefined : wordDiff(previous.topic, version.topic);
  const summary = content.changed ? `Changed from ${against}:` : `Same text as ${against}.`;
  return html`<div class="change">
        <p class="muted">${summary}</p>
        ${topic === undefined ? html`` : html`<p class="diff">Topic: ${topic.markup}</p>`}
        ${content.changed ? html`<p class="content diff">${content.markup}</p>` : html``}
        ${cutNote(version, previous)}
      </div>`;
}
