import { html } from "../../http/html.js";
import { csrfField, flashHtml, layout, type Flash } from "../layout.js";

export function renderSignInPage(view: { csrfToken: string; flash?: Flash }): string {
  return layout(
    "Sign in",
    html`<h1>See what your agents remember</h1>
      <p>Browse and search their memories, follow how each one was corrected, watch facts change over time, and decide what background work proposes.</p>
      ${flashHtml(view.flash)}
      <form method="post" action="/ui/sign-in" class="card">
        ${csrfField(view.csrfToken)}
        <p><label for="api_key">Paste one of your 3ngram API keys</label>
        <input id="api_key" name="api_key" type="password" autocomplete="off" required size="60"></p>
        <p class="hint">The key is checked once and is not stored in your browser; the session lasts at most 8 hours.</p>
        <button type="submit">Sign in</button>
      </form>`,
  );
}
