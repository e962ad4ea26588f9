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

type Tagged = Pick<MemoryRecord, "status" | "supersededBy" | "commitment">;

/** Status tags: archived, replaced, and a commitment's state (with overdue). */
export function statusTags(m: Tagged, now: number): Html {
  const tags: Html[] = [];
  if (m.status === "archived") tags.push(html`<span class="tag">Archived</span>`);
  if (m.supersededBy !== null) tags.push(html`<span class="tag warn">Replaced</span>`);
  return html`${tags}${commitmentTags(m, now)}`;
}

/**
 * A commitment's state, and Overdue when it is past due on a live memory: a replaced or archived
 * version keeps the status it had, but is no longer anything to do (briefing and handoff leave it
 * out too).
 */
export function commitmentTags(m: Tagged, now: number): Html {
  const c = m.commitment;
  if (c === null) return html``;
  const pending = c.status === "open" || c.status === "waiting";
  const live = m.status === "active" && m.supersededBy === null;
  const state = html`<span class="tag ${c.status === "resolved" ? "good" : ""}">${COMMITMENT_TEXT[c.status]}</span>`;
  return pending && live && c.dueAt !== null && Date.parse(c.dueAt) < now ? html`${state}<span class="tag bad">Overdue</span>` : state;
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
