import { html, type Html } from "../html.js";
import { CSRF_FIELD } from "../csrf.js";
import { page } from "./layout.js";

/** The login form: an operator's token (in sandbox mode, the admin token printed at start). */
export function loginPage(o: { csrf: string; error?: string }): Html {
  return page({
    title: "Log in",
    body: html`<div class="login">
      <h1>Operator console</h1>
      ${o.error ? html`<p class="notice bad" role="alert">${o.error}</p>` : ""}
      <form method="post" action="/console/login" class="stack">
        <input type="hidden" name="${CSRF_FIELD}" value="${o.csrf}">
        <label for="token">Operator token
          <input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
        </label>
        <button type="submit">Log in</button>
      </form>
      <p class="muted">Your token from the operators' list, or <code>ADMIN_TOKEN</code>. In sandbox mode, the admin token printed at start.</p>
    </div>`,
  });
}
