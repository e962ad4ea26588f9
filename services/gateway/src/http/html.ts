/**
 * HTML built with a tagged template that escapes every interpolated value unless it is itself
 * built by the template. Escaping is the default, so forgetting it is impossible; nesting stays
 * natural (html`<li>${name}</li>` inside html`<ul>${items}</ul>`), and arrays are joined.
 *
 * Every HTML page of the gateway (the OAuth consent page and the web UI) is built with it.
 *
 * Small on purpose: the pages need text and attribute escaping, composition and nothing else.
 * The libraries that offer this either escape nested templates twice (escape-goat) or bring a
 * whole component model (lit SSR); about twenty lines do the job.
 */

const MARKUP = Symbol("markup");

/** Escapes text for both element content and quoted attribute values. */
function escapeHtml(value: string): string {
  return value.replace(/[&<>"'`=]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A fragment of markup made by `html`: interpolated as is, never escaped again. */
export interface Html {
  readonly [MARKUP]: string;
}

/** What may appear in `${}`: text and numbers are escaped, fragments kept, nothing-values dropped. */
export type Interpolation = Html | string | number | boolean | null | undefined | readonly Interpolation[];

function isHtml(value: unknown): value is Html {
  return typeof value === "object" && value !== null && MARKUP in value;
}

function interpolate(value: Interpolation): string {
  if (value === null || value === undefined || value === false || value === true) return "";
  if (typeof value === "number") return escapeHtml(String(value));
  if (typeof value === "string") return escapeHtml(value);
  if (isHtml(value)) return value[MARKUP];
  return value.map(interpolate).join("");
}

export function html(strings: TemplateStringsArray, ...values: Interpolation[]): Html {
  let out = strings[0] ?? "";
  for (let i = 0; i < values.length; i += 1) out += interpolate(values[i]) + (strings[i + 1] ?? "");
  return { [MARKUP]: out };
}

/** The markup as a string, for the response body. */
export function render(fragment: Html): string {
  return fragment[MARKUP];
}
