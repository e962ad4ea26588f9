/**
 * One memory: its content and metadata, the commitment it carries, and its lineage as one
 * timeline (the versions it replaced and that replaced it, status changes, who did each).
 */
import type { HistoryOutput, MemoryRecord } from "@3ngram/schema";
import { versionAnchor } from "../anchors.js";
import { ACTOR_TEXT, COMMITMENT_TEXT, EDGE_TEXT, TYPE_TEXT, eventText, when } from "../format.js";
import { html, type Html } from "../../http/html.js";
import { layout, type SignedIn } from "../layout.js";
import { commitmentTags, memoryLink, placeText, statusTags, typeTag } from "./parts.js";
import { predecessors, versionChange } from "./version-change.js";

export interface MemoryPageView {
  memory: MemoryRecord;
  history: HistoryOutput;
  now: number;
}

/** Events that mark a version being written; those are shown as the version itself. */
const WRITE_EVENTS = new Set(["create", "revise", "import"]);
/** Bookkeeping a person does not need on the timeline. */
const QUIET_EVENTS = new Set(["embed_done"]);
/** Already told by the version that replaced it (the edge line). */
const SHOWN_AS_EDGES = new Set(["supersede"]);

/** One entry of the timeline; a version's entry carries its anchor so its change can be linked. */
type TimelineItem = { at: string; order: number; body: Html; className: string; id?: string };

function actorText(actor: string | undefined): string {
  return actor === undefined ? "" : ` by ${ACTOR_TEXT[actor] ?? actor}`;
}

function timeline(view: MemoryPageView): Html {
  const { history, memory, now } = view;
  const writtenBy = new Map<string, string>();
  for (const e of history.events) if (WRITE_EVENTS.has(e.kind) && !writtenBy.has(e.memoryId)) writtenBy.set(e.memoryId, e.actor);
  // Edges run from the newer memory to the one it replaced or updated.
  const replacedBy = new Map(history.edges.map((e) => [e.toId, e]));
  const versionOf = new Map(history.lineage.map((m, i) => [m.id, i + 1]));
  const before = predecessors(history);
  const items: TimelineItem[] = history.lineage.map((version, i) => {
    const edge = replacedBy.get(version.id);
    const isThis = version.id === memory.id;
    const title = isThis ? html`<strong>${version.topic}</strong> <span class="tag">this page</span>` : memoryLink(version.id, version.topic);
    const next = edge
      ? html`<br><span class="muted">Later ${EDGE_TEXT[edge.edgeType] === "replaces" ? "replaced" : "updated"} by version ${versionOf.get(edge.fromId) ?? "?"}, ${when(edge.recordedAt, now)}.</span>`
      : html``;
    const previous = before.get(version.id);
    return {
      at: version.recordedAt,
      order: i,
      className: version.supersededBy === null ? "current version" : "version",
      id: versionAnchor(version.id),
      body: html`<p><span class="muted">Version ${i + 1} · ${when(version.recordedAt, now)}${actorText(writtenBy.get(version.id))}</span><br>${title} ${typeTag(version.memoryType)}${next}</p>
        ${versionChange(version, previous, previous && versionOf.get(previous.id))}`,
    };
  });
  for (const [i, e] of history.events.entries()) {
    if (WRITE_EVENTS.has(e.kind) || QUIET_EVENTS.has(e.kind) || SHOWN_AS_EDGES.has(e.kind)) continue;
    const detail = eventDetail(e.payload);
    items.push({
      at: e.createdAt,
      order: 1000 + i,
      className: "event",
      body: html`<p><span class="muted">${when(e.createdAt, now)}</span><br>${eventText(e.kind)}${detail ? ` (${detail})` : ""}${actorText(e.actor)}${
        e.memoryId !== memory.id && versionOf.has(e.memoryId) ? html` — on version ${versionOf.get(e.memoryId)}` : html``
      }</p>`,
    });
  }
  items.sort((a, b) => Date.parse(a.at) - Date.parse(b.at) || a.order - b.order);
  const legend =
    history.lineage.length > 1
      ? html`<p class="muted legend">Under each version, <del>struck-through words</del> were removed and <ins>underlined words</ins> added.</p>`
      : html``;
  return html`${legend}<ol class="timeline">${items.map((item) =>
    item.id === undefined ? html`<li class="${item.className}">${item.body}</li>` : html`<li class="${item.className}" id="${item.id}">${item.body}</li>`,
  )}</ol>`;
}

/** A status change's from → to, in words. */
function eventDetail(payload: Record<string, unknown> | null): string {
  if (payload === null) return "";
  const { from, to } = payload;
  const name = (s: unknown) => (typeof s === "string" ? ((COMMITMENT_TEXT as Record<string, string>)[s] ?? s) : "");
  if (typeof from === "string" && typeof to === "string") return `${name(from)} → ${name(to)}`;
  if (payload.via === "resolve") return "resolved";
  return "";
}

function commitmentBox(memory: MemoryRecord, now: number): Html {
  const c = memory.commitment;
  if (c === null) return html``;
  return html`<section class="card" aria-labelledby="commitment-heading">
      <h2 id="commitment-heading">Commitment</h2>
      <dl>
        <dt>Status</dt><dd>${COMMITMENT_TEXT[c.status]} ${commitmentTags(memory, now)}</dd>
        <dt>Due</dt><dd>${c.dueAt === null ? "no due date" : when(c.dueAt, now)}</dd>
        <dt>Owner</dt><dd>${c.owner ?? "nobody named"}</dd>
      </dl>
    </section>`;
}

export function renderMemoryPage(view: MemoryPageView, signedIn: SignedIn): string {
  const { memory, history, now } = view;
  const tags = memory.tags.length === 0 ? "none" : memory.tags.join(", ");
  const state =
    history.lifecycleState === "superseded"
      ? html`<p class="flash problem" role="note">A later memory replaced this one. ${memory.supersededBy ? memoryLink(memory.supersededBy, "Read the current version") : ""}</p>`
      : history.lifecycleState === "archived"
        ? html`<p class="flash problem" role="note">This memory is archived: searches leave it out unless asked.</p>`
        : html``;
  return layout(
    memory.topic,
    html`<p class="meta">${typeTag(memory.memoryType)} ${statusTags(memory, now)}</p>
      <h1>${memory.topic}</h1>
      ${state}
      <div class="card"><p class="content">${memory.content}${memory.truncated ? " …" : ""}</p></div>
      ${commitmentBox(memory, now)}
      <section aria-labelledby="lineage-heading">
        <h2 id="lineage-heading">History</h2>
        ${timeline(view)}
      </section>
      <section aria-labelledby="details-heading">
        <h2 id="details-heading">Details</h2>
        <dl>
          <dt>Type</dt><dd>${TYPE_TEXT[memory.memoryType]}</dd>
          <dt>Where</dt><dd class="meta">${placeText(memory)}</dd>
          <dt>Tags</dt><dd>${tags}</dd>
          <dt>True from</dt><dd>${when(memory.validFrom, now)}</dd>
          <dt>True until</dt><dd>${when(memory.validTo, now, "still true")}</dd>
          <dt>Recorded</dt><dd>${when(memory.recordedAt, now)}</dd>
          <dt>Id</dt><dd><code>${memory.id}</code></dd>
        </dl>
        <p class="muted">Memories are never edited in place: a correction is a new version linked to the old one.</p>
      </section>`,
    { ...signedIn, section: "search" },
  );
}
