/**
 * How the pages say things to a person: dates relative to now with the full time on hover,
 * names for types and states, and plain sentences in place of internal codes. Presentation only:
 * every value comes from the services as it is.
 */
import type { CommitmentStatus, EdgeProposalRecord, MemoryType } from "@3ngram/schema";
import { html, type Html } from "../http/html.js";

const relative = new Intl.RelativeTimeFormat("en", { numeric: "auto" });
const full = new Intl.DateTimeFormat("en-GB", {
  weekday: "short",
  day: "numeric",
  month: "short",
  year: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  timeZone: "UTC",
});
const day = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short", year: "numeric", timeZone: "UTC" });

const STEPS: ReadonlyArray<[Intl.RelativeTimeFormatUnit, number]> = [
  ["second", 60],
  ["minute", 60],
  ["hour", 24],
  ["day", 7],
  ["week", 4.35],
  ["month", 12],
  ["year", Number.POSITIVE_INFINITY],
];

/** "3 days ago", "in 2 hours", "yesterday". */
export function timeAgo(iso: string, now: number): string {
  let amount = (Date.parse(iso) - now) / 1000;
  for (const [unit, size] of STEPS) {
    if (Math.abs(Math.round(amount)) < size) return relative.format(Math.round(amount), unit);
    amount /= size;
  }
  return relative.format(Math.round(amount), "year");
}

/** "Tue, 3 Mar 2026, 14:05 UTC". */
export function fullTime(iso: string): string {
  return `${full.format(new Date(iso))} UTC`;
}

/** "3 Mar 2026" (chart axes). */
export function shortDate(ms: number): string {
  return day.format(new Date(ms));
}

/** A time as a person reads it: relative, with the exact instant on hover and for machines. */
export function when(iso: string | null, now: number, otherwise = "never"): Html {
  if (iso === null) return html`${otherwise}`;
  return html`<time datetime="${iso}" title="${fullTime(iso)}">${timeAgo(iso, now)}</time>`;
}

export const TYPE_TEXT: Record<MemoryType, string> = {
  decision: "Decision",
  commitment: "Commitment",
  blocker: "Blocker",
  fact: "Fact",
  preference: "Preference",
  pattern: "Pattern",
  note: "Note",
  event: "Event",
};

export const COMMITMENT_TEXT: Record<CommitmentStatus, string> = { open: "Open", waiting: "Waiting", resolved: "Done", expired: "Expired" };

/** What an edge means, read from the newer memory to the older one. */
export const EDGE_TEXT: Record<string, string> = { supersedes: "replaces", updates: "updates", extends: "adds to", derives: "is derived from" };

/** Who did something, from the audit event's actor kind. */
export const ACTOR_TEXT: Record<string, string> = {
  user_mcp: "an agent (MCP)",
  user_api: "a person or app (REST or this UI)",
  worker: "the background worker",
  importer: "an import",
  system: "the system",
};

const EVENT_TEXT: Record<string, string> = {
  create: "Created",
  revise: "Written as a correction",
  supersede: "Replaced",
  resolve: "Marked done",
  unresolve: "Reopened",
  status_change: "Status changed",
  archive: "Archived",
  import: "Imported",
  embed_failed: "Meaning index failed (keyword search still finds it)",
  embed_done: "Indexed for meaning search",
};

export function eventText(kind: string): string {
  return EVENT_TEXT[kind] ?? kind.replaceAll("_", " ");
}

/** A count with thousands separators, the same in every locale: 1,234. */
export function count(n: number): string {
  return n.toLocaleString("en-US");
}

export function percent(share: number): string {
  return `${Math.round(share * 100)}%`;
}

/** Why a link was proposed, in words: what it would do and how alike the two are. */
export function edgeReason(p: Pick<EdgeProposalRecord, "edgeType" | "similarity">): string {
  const alike = `The two memories are ${percent(p.similarity)} alike in meaning`;
  if (p.edgeType === "supersedes") return `${alike}, so the newer one probably replaces the older one.`;
  if (p.edgeType === "updates") return `${alike}, so the newer one probably updates the older one.`;
  return `${alike}: they look related, and linking them keeps both.`;
}

/** How a fact was read out of its memory, from the extractor's rationale code. */
export function factReason(rationale: string | null): string {
  if (rationale === null) return "Read from the memory's text.";
  const measure = /^rule:measure\((.+)\)$/.exec(rationale);
  if (measure) return `A measurement in ${measure[1]} found in the memory's text.`;
  if (rationale === "rule:date") return "A date found in the memory's text.";
  if (rationale === "rule:is-statement") return "An “X is Y” statement found in the memory's text.";
  if (rationale.startsWith("model:")) return `Suggested by the language model ${rationale.slice("model:".length)} from the memory's text.`;
  return "Read from the memory's text.";
}

/** A confidence as words a reviewer can weigh. */
export function confidenceText(confidence: number | null): string {
  if (confidence === null) return "not given";
  const level = confidence >= 0.8 ? "high" : confidence >= 0.6 ? "medium" : "low";
  return `${level} (${percent(confidence)})`;
}
