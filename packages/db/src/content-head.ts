/**
 * Enough characters of a memory's content to cut a 600-character excerpt from it
 * (`MAX_EXCERPT_LENGTH` in @3ngram/schema) and to tell whether it was cut, read instead of the
 * whole text.
 */
const CONTENT_HEAD_CHARS = 700;

/**
 * Two columns every excerpting read selects from `<alias>.content`:
 * - "contentHead": its first CONTENT_HEAD_CHARS characters;
 * - "contentLength": the whole text's length in UTF-16 code units, what JavaScript, our limits and
 *   every answer count. PostgreSQL counts code points, so each character outside the Basic
 *   Multilingual Plane (most emoji) adds one more. Text that is all ASCII (as many bytes as
 *   characters) is its byte count, without the regular expression.
 */
export function contentHeadColumns(alias = "m"): string {
  const content = `${alias}.content`;
  return `left(${content}, ${CONTENT_HEAD_CHARS}) AS "contentHead",
      CASE WHEN octet_length(${content}) = char_length(${content}) THEN octet_length(${content})
           ELSE char_length(${content}) + char_length(regexp_replace(${content}, '[^\\U00010000-\\U0010FFFF]', '', 'g'))
      END AS "contentLength"`;
}
