/**
 * The one HTML page of the authorization server: who is asking, for what, and a field for one of
 * the user's API keys (3ngram has no password accounts; an API key is what proves who you are).
 * Server-rendered, no script and no inline style, every value HTML-escaped; the CSP forbids
 * everything but posting this form, and framing is refused (clickjacking).
 */
import { html, render } from "../http/html.js";

export interface ConsentView {
  clientName: string;
  clientId: string;
  redirectHost: string;
  scopes: readonly string[];
  /** Hidden fields that carry the authorization request through the POST (re-validated there). */
  hidden: Record<string, string>;
  csrfToken: string;
  error?: string;
}

const SCOPE_TEXT: Record<string, string> = {
  "memory:read": "read your memories (search, briefings, facts)",
  "memory:write": "write memories (remember, revise, resolve, proposals)",
  "memory:erase": "permanently erase memories' content (cannot be undone)",
};

export function renderConsentPage(view: ConsentView): string {
  const scopes = view.scopes.map((s) => html`<li><code>${s}</code> — ${SCOPE_TEXT[s] ?? s}</li>`);
  const hidden = Object.entries(view.hidden).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);
  const error = view.error === undefined ? "" : html`<p role="alert"><strong>${view.error}</strong></p>`;
  return render(html`<!doctype html>
<html lang="en">
  <head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>Connect to 3ngram</title></head>
  <body>
    <h1>Connect ${view.clientName} to your 3ngram memory</h1>
    <p>Client <code>${view.clientId}</code> will be sent back to <strong>${view.redirectHost}</strong>.</p>
    <p>It asks to:</p>
    <ul>${scopes}</ul>
    ${error}
    <form method="post" action="/oauth/authorize">
      ${hidden}
      <input type="hidden" name="csrf_token" value="${view.csrfToken}">
      <p><label for="api_key">Paste one of your 3ngram API keys to sign in</label><br>
      <input id="api_key" name="api_key" type="password" autocomplete="off" required size="60"></p>
      <p>The client gets no more than the key's own scopes. The key itself is not shared with it.</p>
      <button type="submit" name="decision" value="allow">Allow</button>
      <button type="submit" name="decision" value="deny" formnovalidate>Deny</button>
    </form>
  </body>
</html>
`);
}

/** A refused request; with `back`, a link that tells the client why (the user follows it, or not). */
export function renderErrorPage(message: string, back?: string): string {
  const link = back === undefined ? "" : html`<p><a href="${back}">Return to the application</a> (it is told that the request failed).</p>`;
  return render(html`<!doctype html>
<html lang="en">
  <head><meta charset="utf-8"><title>Authorization failed</title></head>
  <body>
    <h1>This authorization request cannot continue</h1>
    <p>${message}</p>
    <p>Nothing was shared. Return to the application and try connecting again.</p>
    ${link}
  </body>
</html>
`);
}
