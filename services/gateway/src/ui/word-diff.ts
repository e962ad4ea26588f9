/**
 * A word-level difference between two versions of a memory's text, as markup: removed words in
 * <del>, added words in <ins>, the rest as it was. The words come from jsdiff's diffWords (npm
 * `diff`), the long-kept implementation of Myers' algorithm that editors and test runners use,
 * rather than a hand-written one: tokenising words, punctuation and whitespace well is where home-made
 * diffs go wrong. Every piece of text passes through the escaping template, so hostile text stays
 * text; <del>/<ins> say what changed to assistive technology, and the stylesheet strikes through and
 * underlines them so the difference never rests on colour alone.
 */
import { diffWords } from "diff";
import { html, type Html } from "../http/html.js";

export interface WordDiff {
  markup: Html;
  /** False when the two say the same words (whitespace aside). */
  changed: boolean;
}

export function wordDiff(before: string, after: string): WordDiff {
  const changes = diffWords(before, after);
  const parts = changes.map((change) =>
    change.removed ? html`<del>${change.value}</del>` : change.added ? html`<ins>${change.value}</ins>` : html`${change.value}`,
  );
  return { markup: html`${parts}`, changed: changes.some((change) => change.added || change.removed) };
}
