/**
 * An OAuth client driven over plain HTTP against the real gateway: registration, the consent
 * form (read from the rendered page, CSRF cookie included, submitted with an API key), and the
 * token endpoint. Used where a test needs to hold a step the official SDK would hide.
 */
import { createHash, randomBytes } from "node:crypto";

export const REDIRECT_URI = "http://127.0.0.1:7777/callback";

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

export interface HttpAnswer<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
}

export async function registerClient(baseUrl: string, metadata: Record<string, unknown>): Promise<HttpAnswer> {
  const res = await fetch(`${baseUrl}/oauth/register`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(metadata) });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

export async function registerPublicClient(baseUrl: string, extra: Record<string, unknown> = {}): Promise<string> {
  const answer = await registerClient(baseUrl, { client_name: "test client", redirect_uris: [REDIRECT_URI], ...extra });
  if (answer.status !== 201) throw new Error(`registration failed: ${JSON.stringify(answer.body)}`);
  return answer.body.client_id as string;
}

function unescapeHtml(value: string): string {
  return value.replace(/&#(\d+);/g, (_m, code: string) => String.fromCharCode(Number(code)));
}

export interface ConsentPage {
  status: number;
  headers: Headers;
  html: string;
  /** The oauth_csrf cookie as a Cookie header value. */
  cookie: string | undefined;
  hidden: Record<string, string>;
}

export async function openConsent(url: string | URL): Promise<ConsentPage> {
  const res = await fetch(url, { redirect: "manual" });
  const html = await res.text();
  const hidden: Record<string, string> = {};
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) hidden[unescapeHtml(match[1]!)] = unescapeHtml(match[2]!);
  const setCookie = res.headers.get("set-cookie");
  return { status: res.status, headers: res.headers, html, cookie: setCookie?.split(";")[0], hidden };
}

export function authorizeUrl(baseUrl: string, params: Record<string, string | undefined>): URL {
  const url = new URL(`${baseUrl}/oauth/authorize`);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url;
}

/** Submits a consent page as the user would; answers the raw response (a redirect on success). */
export async function submitConsent(baseUrl: string, page: ConsentPage, fields: Record<string, string>): Promise<Response> {
  return fetch(`${baseUrl}/oauth/authorize`, {
    method: "POST",
    redirect: "manual",
    headers: { "Content-Type": "application/x-www-form-urlencoded", ...(page.cookie ? { Cookie: page.cookie } : {}) },
    body: new URLSearchParams({ ...page.hidden, ...fields }),
  });
}

/** Opens the page at `url`, approves it with `apiKey`, and returns where the browser is sent next. */
export async function approve(baseUrl: string, url: string | URL, apiKey: string): Promise<URL> {
  const page = await openConsent(url);
  if (page.status !== 200) throw new Error(`consent page answered ${page.status}: ${page.html}`);
  const res = await submitConsent(baseUrl, page, { api_key: apiKey, decision: "allow" });
  const location = res.headers.get("location");
  if (res.status !== 302 || location === null) throw new Error(`consent answered ${res.status}`);
  return new URL(location);
}

export async function tokenRequest(baseUrl: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  const res = await fetch(`${baseUrl}/oauth/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(form),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
}

export interface IssuedCode {
  clientId: string;
  verifier: string;
  code: string;
}

/** Registration (unless a client is given), consent with `apiKey`, and the code it yields. */
export async function obtainCode(baseUrl: string, apiKey: string, options: { clientId?: string; scope?: string } = {}): Promise<IssuedCode> {
  const clientId = options.clientId ?? (await registerPublicClient(baseUrl));
  const { verifier, challenge } = pkcePair();
  const redirect = await approve(
    baseUrl,
    authorizeUrl(baseUrl, {
      response_type: "code",
      client_id: clientId,
      redirect_uri: REDIRECT_URI,
      code_challenge: challenge,
      code_challenge_method: "S256",
      state: "s-1",
      scope: options.scope,
    }),
    apiKey,
  );
  const code = redirect.searchParams.get("code");
  if (code === null) throw new Error(`no code in ${redirect.search}`);
  return { clientId, verifier, code };
}

export function redeemForm(issued: IssuedCode): Record<string, string> {
  return { grant_type: "authorization_code", code: issued.code, client_id: issued.clientId, redirect_uri: REDIRECT_URI, code_verifier: issued.verifier };
}

/** A full grant: access token and refresh token for `apiKey`'s user. */
export async function obtainTokens(baseUrl: string, apiKey: string, options: { scope?: string } = {}) {
  const issued = await obtainCode(baseUrl, apiKey, options);
  const answer = await tokenRequest(baseUrl, redeemForm(issued));
  if (answer.status !== 200) throw new Error(`token request failed: ${JSON.stringify(answer.body)}`);
  return { ...issued, accessToken: answer.body.access_token as string, refreshToken: answer.body.refresh_token as string, scope: answer.body.scope as string };
}
