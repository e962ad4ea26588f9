/** Small pieces several pages show: a memory's type and status tags, its place, a memory card. */
import type { MemoryRecord, MemoryType } from "@3ngram/schema";
import { COMMITMENT_TEXT, TYPE_TEXT, when } from "../format.js";
import { html, type Html } from "../../http/html.js";

export function typeTag(type: MemoryType): Html {
  return html`<span class="tag">${TYPE_TEXT[type]}</span>`;
}

export function memoryLink(id: string, text: string): Html {
  return html`<a href="/ui/memories/${id}">${text}</a>`;
}

/** Scope, and project when there is one. */
export function placeText(m: { scope: string; project: string | null }): Html {
  return m.project === null ? html`<span>scope ${m.scope}</span>` : html`<span>scope ${m.scope}</span><span>project ${m.project}</span>`;
}

/** Status tags: archived, replaced, and a commitment's state (with overdue). */
export function statusTags(m: Pick<MemoryRecord, "status" | "supersededBy" | "commitment">, now: number): Html {
  const tags: Html[] = [];
  if (m.status === "archived") tags.push(html`<span class="tag">Archived</span>`);
  if (m.supersededBy !== null) tags.push(html`<span class="tag warn">Replaced</span>`);
  if (m.commitment !== null) {
    const c = m.commitment;
    const live = c.status === "open" || c.status === "waiting";
    tags.push(html`<span class="tag ${c.status === "resolved" ? "good" : ""}">${COMMITMENT_TEXT[c.status]}</span>`);
    if (live && c.dueAt !== null && Date.parse(c.dueAt) < now) tags.push(html`<span class="tag bad">Overdue</span>`);
  }
  return html`${tags}`;
}

/** A memory in a box (the proposal pages put two side by side). */
export function memoryCard(heading: string, memory: MemoryRecord | undefined, id: string, now: number): Html {
  if (memory === undefined) return html`<section class="card"><h2>${heading}</h2><p>This memory (<code>${id}</code>) can no longer be read.</p></section>`;
  return html`<section class="card">
        <h2>${heading}: ${memory.topic}</h2>
        <p class="meta">${typeTag(memory.memoryType)} ${statusTags(memory, now)} ${placeText(memory)} <span>recorded ${when(memory.recordedAt, now)}</span></p>
        <p class="content">${memory.content}${memory.truncated ? " …" : ""}</p>
        <p>${memoryLink(memory.id, "Open this memory")}</p>
      </section>`;
}
