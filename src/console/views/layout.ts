import { html, type Html } from "../html.js";
import { CSRF_FIELD } from "../csrf.js";
import type { ConsoleSession } from "../session.js";

export type Section = "overview" | "licences" | "jobs" | "reconcile" | "adoption" | "audit";

const NAV: [Section, string, string][] = [
  ["overview", "Overview", "/console"],
  ["licences", "Licences", "/console/licences"],
  ["jobs", "Jobs", "/console/jobs"],
  ["reconcile", "Reconcile", "/console/reconcile"],
  ["adoption", "Adoption", "/console/adoption"],
  ["audit", "Audit", "/console/audit"],
];

export const iso = (ms: number | null | undefined) => (ms === null || ms === undefined ? "" : new Date(ms).toISOString().replace(".000Z", "Z"));

/** The hidden CSRF field of a session's form. */
export const csrfField = (s: ConsoleSession) => html`<input type="hidden" name="${CSRF_FIELD}" value="${s.csrf}">`;

export const statusBadge = (status: string) => html`<span class="status status-${status}">${status}</span>`;

/** A whole page: the bare one (login) without `session`, the console's with its navigation. */
export function page(o: { title: string; session?: ConsoleSession; section?: Section; body: Html }): Html {
  const nav = o.session
    ? html`<header class="top">
        <span class="brand">license-bridge</span>
        <nav aria-label="Console">${NAV.map(([key, label, href]) => html` <a href="${href}"${o.section === key ? html` aria-current="page"` : ""}>${label}</a>`)}</nav>
        <form method="post" action="/console/logout">
          <span class="who">${o.session.actor.name} (${o.session.actor.role})</span>
          ${csrfField(o.session)}<button type="submit" class="secondary">Log out</button>
        </form>
      </header>`
    : "";
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${o.title} · license-bridge console</title>
<link rel="stylesheet" href="/console/assets/console.css">
</head>
<body>
${nav}
<main id="main">
${o.body}
</main>
</body>
</html>`;
}

/** An action's result, or a refusal, with the way back. */
export function outcomePage(o: { session: ConsoleSession; section: Section; title: string; ok: boolean; message: string; back: string; detail?: Html }): Html {
  return page({
    title: o.title,
    session: o.session,
    section: o.section,
    body: html`<h1>${o.title}</h1>
      <p class="notice ${o.ok ? "ok" : "bad"}" role="status">${o.message}</p>
      ${o.detail}
      <p><a href="${o.back}">Back</a></p>`,
  });
}

/** What an error page's heading says, by status; any other status is named by its number. */
const ERROR_TITLES: Record<number, string> = {
  400: "Bad request",
  401: "Session ended",
  403: "Not allowed",
  404: "Not found",
  413: "Too large",
  415: "Unsupported form",
  429: "Too many attempts",
  500: "Something went wrong",
  503: "Try again shortly",
};

/**
 * An error as a page, with its status kept: what the admin API would answer in JSON, in words,
 * with the way on (the overview for a session, the login without one) and, when the answer has a
 * Retry-After, when to send the form again.
 */
export function errorPage(o: { session?: ConsoleSession; status: number; message: string; retryAfterSeconds?: number }): Html {
  const title = ERROR_TITLES[o.status] ?? `Error ${o.status}`;
  return page({
    title,
    session: o.session,
    body: html`<h1>${title}</h1>
      <p class="notice bad" role="alert">${o.message}</p>
      ${o.retryAfterSeconds === undefined ? "" : html`<p>Try again in ${o.retryAfterSeconds} seconds.</p>`}
      <p>${o.session ? html`<a href="/console">Overview</a>` : html`<a href="/console/login">Log in</a>`}</p>`,
  });
}
