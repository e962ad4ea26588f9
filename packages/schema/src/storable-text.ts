import { z } from "zod";

/**
 * PostgreSQL cannot store U+0000 in text (it answers "invalid byte sequence"), and a UTF-16
 * surrogate without its partner has no UTF-8 form at all (the driver would silently swap it for
 * U+FFFD). Either is a caller's mistake, so every string a client may send is checked here, once,
 * before anything is written; the HTTP edges that read strings outside a schema (OAuth forms and
 * query strings) call isStorableText themselves.
 */
// eslint-disable-next-line no-control-regex -- finding NUL is the point of this pattern
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export const UNSTORABLE_TEXT_MESSAGE = "must not contain NUL (U+0000) or unpaired surrogate characters";

export function isStorableText(value: string): boolean {
  return !UNSTORABLE.test(value);
}

/**
 * The base of every client-supplied string schema: a string that can be stored. The check runs
 * first and stops the field's other checks, so the one problem named is this one.
 */
export function storableText(): z.ZodString {
  return z.string().refine(isStorableText, { message: UNSTORABLE_TEXT_MESSAGE, abort: true });
}
