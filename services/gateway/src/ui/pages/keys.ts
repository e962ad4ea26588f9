/** A person's own API keys: list, create (read-only or read-write, named), revoke; a new key shown once. */
import type { ApiKeyRecord } from "@3ngram/schema";
import { when } from "../format.js";
import { html, type Html } from "../../http/html.js";
import { csrfField, flashHtml, layout, type Flash, type SignedIn } from "../layout.js";

export interface KeysPageView {
  keys: ApiKeyRecord[];
  /** Just created: the whole key, shown on this one page and never again. */
  issued?: { name: string; apiKey: string };
  /** The key this session was signed in with. */
  sessionKeyId?: string;
  flash?: Flash;
  now: number;
}

function accessText(scopes: readonly string[]): string {
  return scopes.includes("memory:write") ? "Read and write" : "Read only";
}

function keyRow(key: ApiKeyRecord, view: KeysPageView, signedIn: SignedIn): Html {
  const canRevoke = key.revokedAt === null && (signedIn.canWrite || !key.scopes.includes("memory:write"));
  const revoke = canRevoke
    ? html`<form method="post" action="/ui/keys/${key.id}/revoke">${csrfField(signedIn.csrfToken)}<button type="submit" class="danger" aria-label="Revoke ${key.name}">Revoke</button></form>`
    : html``;
  const status = key.revokedAt === null ? html`<span class="tag good">Active</span>` : html`<span class="tag">Revoked ${when(key.revokedAt, view.now)}</span>`;
  const mine = key.id === view.sessionKeyId ? html` <span class="tag">this session</span>` : html``;
  return html`<tr><td>${key.name}${mine}</td><td><code>3ng_${key.prefix}_…</code></td><td>${accessText(key.scopes)}</td><td>${when(key.createdAt, view.now)}</td><td>${when(key.lastUsedAt, view.now)}</td><td>${status}</td><td>${revoke}</td></tr>`;
}

function createForm(signedIn: SignedIn): Html {
  const write = signedIn.canWrite
    ? html`<label class="choice"><input type="radio" name="access" value="read_write"> Read and write</label>`
    : html`<p class="hint">Your session can only read, so it can only create read-only keys.</p>`;
  return html`<form method="post" action="/ui/keys" class="card">
      ${csrfField(signedIn.csrfToken)}
      <h2>Create a key</h2>
      <div class="fields">
        <div><label for="name">Name</label><input id="name" name="name" type="text" maxlength="256" required placeholder="laptop claude"></div>
        <fieldset><legend>Access</legend><label class="choice"><input type="radio" name="access" value="read" checked> Read only</label>${write}</fieldset>
      </div>
      <button type="submit">Create key</button>
    </form>`;
}

export function renderKeysPage(view: KeysPageView, signedIn: SignedIn): string {
  const issued = view.issued
    ? html`<section class="card" aria-labelledby="new-key"><h2 id="new-key">Your new key “${view.issued.name}”</h2>
        <p>Copy it now: it is shown only this once and cannot be read again.</p>
        <p class="key" id="new-key-value">${view.issued.apiKey}</p></section>`
    : html``;
  const table =
    view.keys.length === 0
      ? html`<p class="muted">You have no keys yet.</p>`
      : html`<div class="scroll"><table><thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Access</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Status</th><th scope="col"><span class="muted">Action</span></th></tr></thead>
        <tbody>${view.keys.map((k) => keyRow(k, view, signedIn))}</tbody></table></div>`;
  return layout(
    "Keys",
    html`<h1>Your API keys</h1>
      ${flashHtml(view.flash)}
      ${issued}
      <p>Agents and scripts use a key to reach your memories over MCP and REST. Give each its own key, so you can revoke one without touching the others. A revoked key stops working within 30 seconds; a web session already signed in with it lasts until it expires.</p>
      ${table}
      ${createForm(signedIn)}`,
    { ...signedIn, section: "keys" },
  );
}
