/**
 * A minimal browser for the review UI: plain fetch with a cookie jar, redirects not followed (so a
 * test sees each 302/303), and the hidden CSRF field read from the page the way a form would send it.
 */

export interface Page {
  status: number;
  headers: Headers;
  html: string;
  /** Where a redirect points (path and query), if any. */
  location: string | undefined;
}

function unescapeHtml(value: string): string {
  return value.replace(/&#(\d+);/g, (_m, code: string) => String.fromCharCode(Number(code)));
}

export class Browser {
  readonly cookies = new Map<string, string>();
  /** Every Set-Cookie line received, newest last, to check attributes. */
  readonly setCookies: string[] = [];

  constructor(private readonly baseUrl: string) {}

  async get(path: string): Promise<Page> {
    return this.send(path, { method: "GET" });
  }

  async post(path: string, fields: Record<string, string>): Promise<Page> {
    return this.send(path, { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields) });
  }

  /** Opens the sign-in page and submits `apiKey` with its CSRF token. */
  async signIn(apiKey: string): Promise<Page> {
    const form = await this.get("/ui/sign-in");
    return this.post("/ui/sign-in", { csrf_token: csrfOf(form), api_key: apiKey });
  }

  private async send(path: string, init: RequestInit): Promise<Page> {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    const res = await fetch(`${this.baseUrl}${path}`, {
      ...init,
      redirect: "manual",
      headers: { ...(init.headers as Record<string, string>), ...(cookie ? { Cookie: cookie } : {}) },
    });
    for (const line of res.headers.getSetCookie()) {
      this.setCookies.push(line);
      const [pair = "", ...attributes] = line.split(";").map((s) => s.trim());
      const [name = "", ...value] = pair.split("=");
      const expired = attributes.some((a) => /^max-age=0$/i.test(a) || (/^expires=/i.test(a) && Date.parse(a.slice(8)) <= Date.now()));
      if (expired || value.join("=") === "") this.cookies.delete(name);
      else this.cookies.set(name, value.join("="));
    }
    const location = res.headers.get("location") ?? undefined;
    return { status: res.status, headers: res.headers, html: await res.text(), location };
  }
}

/** The first hidden csrf_token field on a page. */
export function csrfOf(page: Page): string {
  const match = /<input type="hidden" name="csrf_token" value="([^"]*)">/.exec(page.html);
  if (!match) throw new Error(`no csrf_token on a ${page.status} page`);
  return unescapeHtml(match[1]!);
}

/** The Set-Cookie line for `name` with the newest value, attributes included. */
export function lastSetCookie(browser: Browser, name: string): string | undefined {
  return browser.setCookies.filter((line) => line.startsWith(`${name}=`)).at(-1);
}
