import { MAX_EXCERPT_LENGTH } from "./limits.js";

export interface CutText {
  text: string;
  truncated: boolean;
  /** Length of the full text in UTF-16 code units (what JavaScript and our limits count). */
  contentLength: number;
}

const ELLIPSIS = "…";

/**
 * Cuts text to at most `max` code units without splitting a surrogate pair. With a marker, the
 * marker counts inside the bound so an excerpt never exceeds it.
 */
export function cutText(text: string, max: number, options: { marker?: boolean } = {}): CutText {
  if (text.length <= max) return { text, truncated: false, contentLength: text.length };
  const room = options.marker ? max - ELLIPSIS.length : max;
  let end = Math.max(0, room);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1; // would leave a lone high surrogate
  return { text: text.slice(0, end) + (options.marker ? ELLIPSIS : ""), truncated: true, contentLength: text.length };
}

/** The bounded excerpt search hits and handoff lines carry. */
export function excerpt(text: string): CutText {
  return cutText(text, MAX_EXCERPT_LENGTH, { marker: true });
}
