/**
 * fast-check arbitraries for hostile HTTP input: the strings, values, paths, query strings,
 * headers and bodies that broke the gateway once (issue 11) and their neighbours. Each request
 * arbitrary produces a plain description of one HTTP request; the fuzz test sends it.
 */
import fc from "fast-check";

/** Fragments that have each been a bug somewhere: NUL, half surrogate pairs, built-in names, escapes. */
const FRAGMENTS = [
  "\u0000",
  "a\u0000b",
  "\ud800",
  "\udfff",
  "x\ud83d",
  "\ud83d\ude00",
  "__proto__",
  "constructor",
  "toString",
  "hasOwnProperty",
  "%",
  "%ff",
  "%00",
  "%E0%A4%A",
  "../../etc/passwd",
  "'; DROP TABLE memories; --",
  '{"a":',
  "\\",
  "\u202e",
  "\ufeff",
  " ",
  "",
  "null",
  "0190c0de-0000-7000-8000-00000000dead",
];

/** A string a client might send to hurt us: plain, any code unit, a known fragment, or a mix. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...FRAGMENTS),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.tuple(fc.string({ maxLength: 10 }), fc.constantFrom(...FRAGMENTS), fc.string({ maxLength: 10 })).map((parts) => parts.join("")),
  fc.integer({ min: 2_000, max: 3_000 }).map((n) => "x".repeat(n)),
);

/** Any JSON-ish value, strings hostile, keys too, nesting bounded. */
export const hostileValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    hostileString,
    fc.integer(),
    fc.double({ noNaN: true }),
    fc.constantFrom(true, false, null, Number.POSITIVE_INFINITY, -0, 2 ** 53 + 1),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(hostileString, tie("value"), { maxKeys: 4 }),
  ),
})).value;

/** A valid-looking body with one thing wrong (or right): a field replaced, added or dropped, or the whole body replaced. */
export function mutated(template: Record<string, unknown>): fc.Arbitrary<unknown> {
  const keys = Object.keys(template);
  return fc.oneof(
    fc.constant(template),
    keys.length === 0 ? fc.constant(template) : fc.tuple(fc.constantFrom(...keys), hostileValue).map(([k, v]) => ({ ...template, [k]: v })),
    fc.tuple(hostileString, hostileValue).map(([k, v]) => ({ ...template, [k]: v })),
    keys.length === 0 ? fc.constant({}) : fc.constantFrom(...keys).map((k) => Object.fromEntries(Object.entries(template).filter(([key]) => key !== k))),
    hostileValue,
  );
}

/** Percent-encodes text for a URL; a half surrogate pair, which has no UTF-8 form, goes in as CESU bytes. */
function pctEncode(text: string): string {
  return text
    .replace(/[\ud800-\udfff]/g, "\u0001")
    .split("")
    .map((c) => (c === "\u0001" ? "%ED%A0%80" : encodeURIComponent(c)))
    .join("");
}

/** A path segment: a well-formed id, an encoded hostile string, or raw bytes a router has to decode. */
export const hostileSegment: fc.Arbitrary<string> = fc.oneof(
  fc.uuid(),
  hostileString.map(pctEncode),
  fc.constantFrom("%", "%ff", "%zz", "%E0%A4%A", "%C0%AF", "%00", "%2e%2e", "%ED%A0%80", "a%", "..", "."),
);

const QUERY_KEYS = [
  "project",
  "scope",
  "type",
  "memoryTypes",
  "status",
  "limit",
  "offset",
  "subject",
  "predicate",
  "validAt",
  "from",
  "to",
  "kind",
  "sections",
  "sectionLimit",
  "mode",
  "format",
  "done",
  "constructor",
  "__proto__",
  "toString",
  "valueOf",
  "hasOwnProperty",
];

/** A query string (without "?"): known and built-in-named keys with hostile values, repeats, or raw malformed text. */
const BUILT_IN_NAMES = ["constructor", "__proto__", "toString", "valueOf", "hasOwnProperty", "__defineGetter__", "isPrototypeOf"];
const queryText = (pairs: readonly (readonly [string, string])[]) => pairs.map(([k, v]) => `${pctEncode(k)}=${pctEncode(v)}`).join("&");

export const hostileQuery: fc.Arbitrary<string> = fc.oneof(
  fc.array(fc.tuple(fc.oneof(fc.constantFrom(...QUERY_KEYS), hostileString), hostileString), { maxLength: 4 }).map(queryText),
  // Only names every object inherits: a lookup table that is not checked for own keys breaks on these.
  fc.array(fc.tuple(fc.constantFrom(...BUILT_IN_NAMES), hostileString), { minLength: 1, maxLength: 3 }).map(queryText),
  fc.constantFrom("%", "a=%", "a=%ff&b=%", "=&=&", "a[b]=c", "__proto__[x]=1", "constructor=x&__proto__=y", "kind=all&kind=scope", "limit=1e99", "limit=-1"),
);

export interface BodySpec {
  contentType?: string;
  contentEncoding?: string;
  /** The bytes sent (a JSON text, a form, NDJSON, or junk). */
  text: string;
}

/** Headers a client may get wrong about its body. */
const CONTENT_TYPES = [
  "application/json",
  "application/json; charset=utf-8",
  "application/json; charset=utf-16",
  "application/json; charset=bogus",
  "text/plain",
  "application/x-ndjson",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  undefined,
];
const CONTENT_ENCODINGS = [undefined, undefined, undefined, "gzip", "deflate", "br", "identity", "compress", "gzip, br", "x-unknown"];

/** A JSON body from a value, sometimes mislabelled or claiming an encoding it does not have, sometimes not JSON at all. */
export function jsonBody(value: fc.Arbitrary<unknown>): fc.Arbitrary<BodySpec> {
  return fc.oneof(
    { weight: 4, arbitrary: value.map((v) => ({ contentType: "application/json", text: JSON.stringify(v) ?? "null" })) },
    {
      weight: 2,
      arbitrary: fc
        .record({ value, contentType: fc.constantFrom(...CONTENT_TYPES), contentEncoding: fc.constantFrom(...CONTENT_ENCODINGS) })
        .map(({ value: v, contentType, contentEncoding }) => ({ contentType, contentEncoding, text: JSON.stringify(v) ?? "" })),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        text: fc.oneof(fc.constantFrom("{", "[", '{"a":1,}', "\u0000", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", '"str"', "nul", "{}garbage"), hostileString),
        contentType: fc.constantFrom(...CONTENT_TYPES),
      }),
    },
  );
}

/** A urlencoded form from hostile fields, keys sometimes repeated. */
export function formBody(keys: readonly string[]): fc.Arbitrary<BodySpec> {
  return fc
    .array(fc.tuple(fc.oneof(fc.constantFrom(...keys), hostileString), hostileString), { maxLength: 8 })
    .chain((pairs) => fc.constantFrom(...CONTENT_ENCODINGS).map((contentEncoding) => ({ pairs, contentEncoding })))
    .map(({ pairs, contentEncoding }) => ({
      contentType: "application/x-www-form-urlencoded",
      contentEncoding,
      text: pairs.map(([k, v]) => `${pctEncode(k)}=${pctEncode(v)}`).join("&"),
    }));
}
