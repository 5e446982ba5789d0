import { html, type Html } from "../html.js";
import type { HistoryRow, MailRow, Page, ServiceRow } from "../../store/store.js";
import type { Job } from "../../vocabulary/jobs.js";
import { SERVICE_STATUSES } from "../../vocabulary/service-statuses.js";
import { PROVIDER_NAMES, PROVIDER_TITLES, type ProviderName } from "../../vocabulary/providers.js";
import { mayAct, type ActionName } from "../../admin/actions.js";
import type { ConsoleSession } from "../session.js";
import { csrfField, iso, page, statusBadge } from "./layout.js";

const licenceHref = (id: string) => `/console/licences/${encodeURIComponent(id)}`;

export interface LicenceSearchView {
  q: string;
  status: string;
  provider: string;
  rows: ServiceRow[];
  /** How many licences the search matches in all. */
  total: number;
  /** The query string of the next page, or undefined on the last. */
  next?: string;
}

/** Search by service id, IP, customer e-mail or licence key, status and provider; pages by service id. */
export function licencesPage(session: ConsoleSession, v: LicenceSearchView): Html {
  return page({
    title: "Licences",
    session,
    section: "licences",
    body: html`<h1>Licences</h1>
      <form method="get" action="/console/licences" class="search" role="search">
        <label for="q">Service id, IP, customer e-mail or licence key <input id="q" name="q" value="${v.q}" size="32"></label>
        <label for="status">Status <select id="status" name="status"><option value="">any</option>${SERVICE_STATUSES.map(
          (s) => html`<option value="${s}"${v.status === s ? html` selected` : ""}>${s}</option>`,
        )}</select></label>
        <label for="provider">Provider <select id="provider" name="provider"><option value="">any</option>${PROVIDER_NAMES.map(
          (p) => html`<option value="${p}"${v.provider === p ? html` selected` : ""}>${PROVIDER_TITLES[p]}</option>`,
        )}</select></label>
        <button type="submit">Search</button>
      </form>
      ${v.rows.length === 0
        ? html`<p>No licence matches.</p>`
        : html`<p class="muted">${v.total} in all.</p><div class="table-wrap"><table><thead><tr><th>Service</th><th>Status</th><th>IP</th><th>Product</th><th>Provider</th><th>Customer</th><th>Expires</th></tr></thead><tbody>${v.rows.map(
            (s) => html`<tr><td><a href="${licenceHref(s.service_id)}">${s.service_id}</a></td><td>${statusBadge(s.status)}</td><td>${s.ip}</td>
              <td>${s.type ?? s.bundle}${s.variant ? html` <span class="muted">${s.variant}</span>` : ""}</td><td>${providerTitle(s)}</td><td>${s.customer_email}</td><td>${iso(s.expires_at)}</td></tr>`,
          )}</tbody></table></div>`}
      <nav class="pager" aria-label="Pages">${v.next ? html`<a href="/console/licences?${v.next}" rel="next">Next page</a>` : html`<span class="muted">Last page</span>`}</nav>`,
  });
}

export interface LicenceView {
  service: ServiceRow;
  /** A page of the history, newest first, with where the next (older) page begins and how many there are. */
  history: Page<HistoryRow>;
  /** Whether this page is an older one (not the latest entries). */
  olderHistory: boolean;
  jobs: Job[];
  mails: MailRow[];
  installCommands: { type: string; command: string }[] | string;
  ipChangesLeft: number | null;
}

/** The licence actions a role may take from this page, with the paths of their confirmations. */
const ACTIONS = [
  { action: "suspend", label: "Suspend", name: "suspend", when: (s: ServiceRow) => s.status === "active" },
  { action: "unsuspend", label: "Unsuspend", name: "unsuspend", when: (s: ServiceRow) => s.status === "suspended" },
  { action: "change-ip", label: "Change IP", name: "changeIp", when: (s: ServiceRow) => s.status === "active" || s.status === "suspended" },
  { action: "resend-install-mail", label: "Resend install mail", name: "resendInstallMail", when: (s: ServiceRow) => s.status === "active" && s.customer_email !== null },
  // Only where there is a limit to count against.
  { action: "reset-ip-changes", label: "Reset IP changes", name: "resetIpChanges", when: (_s: ServiceRow, v: LicenceView) => v.ipChangesLeft !== null },
] as const satisfies readonly { action: string; label: string; name: ActionName; when(s: ServiceRow, v: LicenceView): boolean }[];

export function licencePage(session: ConsoleSession, v: LicenceView): Html {
  const s = v.service;
  const allowed = ACTIONS.filter((a) => mayAct(session.actor, a.name) && a.when(s, v));
  const commands =
    typeof v.installCommands === "string"
      ? html`<span class="muted">${v.installCommands}</span>`
      : v.installCommands.map((c) => html`<div><span class="muted">${c.type}</span><pre>${c.command}</pre></div>`);
  return page({
    title: `Licence ${s.service_id}`,
    session,
    section: "licences",
    body: html`<h1>Licence ${s.service_id} ${statusBadge(s.status)}</h1>
      <div class="actions">${
        allowed.length === 0
          ? html`<span class="muted">${mayAct(session.actor, "suspend") ? "No action applies in this state." : `Your role (${session.actor.role}) reads only.`}</span>`
          : allowed.map((a) => html`<a class="button secondary" href="${licenceHref(s.service_id)}/confirm/${a.action}">${a.label}</a>`)
      }</div>
      <dl class="facts">
        <dt>Product</dt><dd>${s.type ?? s.bundle} ${s.variant ?? ""} <span class="muted">(panel product ${s.product_id}, ${s.billing_cycle})</span></dd>
        <dt>Provider</dt><dd>${providerTitle(s)}${s.sku ? html` <span class="muted">(${s.provider === "manage2" ? "package" : "type"} ${s.sku}${s.upstream_id ? `, licence ${s.upstream_id}` : ""})</span>` : ""}</dd>
        <dt>IP</dt><dd>${s.ip}</dd>
        <dt>Customer</dt><dd>${s.customer_name ?? ""} ${s.customer_email ?? html`<span class="muted">no e-mail</span>`}</dd>
        <dt>Expires</dt><dd>${iso(s.expires_at) || html`<span class="muted">not yet</span>`}</dd>
        <dt>Paid until</dt><dd>${iso(s.paid_until)}</dd>
        <dt>IP changes</dt><dd>${s.ip_changes} made${v.ipChangesLeft === null ? ", no limit" : html`, <strong>${v.ipChangesLeft}</strong> left`}</dd>
        <dt>Licence key</dt><dd><code>${s.license_key}</code></dd>
        <dt>Created by module</dt><dd>${s.module ?? html`<span class="muted">none (a webhook)</span>`}</dd>
        <dt>Last error</dt><dd>${s.last_error ? html`<span class="bad">${s.last_error}</span>` : html`<span class="muted">none</span>`}</dd>
        <dt>Install command</dt><dd>${commands}</dd>
      </dl>
      <h2 id="history">History</h2>
      <p class="muted">${v.history.total} entries in all${v.olderHistory ? html`; older ones, newest first. <a href="${licenceHref(s.service_id)}">The latest</a>` : ", the latest first"}.</p>
      <ol class="timeline">${v.history.items.map(
        (h) => html`<li><time datetime="${iso(h.at)}">${iso(h.at)}</time> <strong>${h.action}</strong> ${h.detail ?? ""}${h.job_id ? html` <span class="muted">job ${h.job_id}</span>` : ""}</li>`,
      )}</ol>
      ${v.history.nextCursor ? html`<nav class="pager"><a rel="next" href="${licenceHref(s.service_id)}?${new URLSearchParams({ history: v.history.nextCursor }).toString()}#history">Older entries</a></nav>` : ""}
      <h2>Jobs</h2>
      ${v.jobs.length === 0 ? html`<p class="muted">None.</p>` : jobsTable(session, v.jobs)}
      <h2>Mails</h2>
      ${v.mails.length === 0
        ? html`<p class="muted">None.</p>`
        : html`<div class="table-wrap"><table><thead><tr><th>Kind</th><th>To</th><th>Subject</th><th>State</th><th>Sent</th></tr></thead><tbody>${v.mails.map(
            (m) => html`<tr><td>${m.kind}</td><td>${m.to_address}</td><td>${m.subject}</td><td>${m.state}${m.last_error ? html` <span class="bad">${m.last_error}</span>` : ""}</td><td>${iso(m.sent_at)}</td></tr>`,
          )}</tbody></table></div>`}`,
  });
}

/** Jobs with their retry and cancel links where the role allows them. */
export function jobsTable(session: ConsoleSession, jobs: Job[]): Html {
  const canRetry = mayAct(session.actor, "retryJob");
  const canCancel = mayAct(session.actor, "cancelJob");
  const stopped = (j: Job) => j.state === "failed" || j.state === "blocked";
  return html`<div class="table-wrap"><table><thead><tr><th>Job</th><th>Kind</th><th>Service</th><th>State</th><th>Attempts</th><th>Error</th><th>Updated</th><th>Action</th></tr></thead><tbody>${jobs.map(
    (j) => html`<tr id="job-${j.id}"><td>${j.id}</td><td>${j.kind}</td><td>${j.serviceId ? html`<a href="${licenceHref(j.serviceId)}">${j.serviceId}</a>` : ""}</td>
      <td>${statusBadge(j.state)}${j.skipped ? html` <span class="muted">skipped: ${j.skipped}</span>` : ""}</td><td class="num">${j.attempts}/${j.maxAttempts}</td>
      <td>${j.lastError}</td><td>${iso(j.updatedAt)}</td>
      <td>${canRetry && stopped(j) ? html`<a class="button secondary" href="/console/jobs/${j.id}/confirm/retry">Retry</a>` : ""}${
        // A job that may have charged is retried or reconciled, never cancelled (the action refuses it too).
        canCancel && stopped(j) && j.intent === null ? html` <a class="button secondary" href="/console/jobs/${j.id}/confirm/cancel">Cancel</a>` : ""
      }</td></tr>`,
  )}</tbody></table></div>`;
}

/** Who sells a service's licence, in words. */
const providerTitle = (s: ServiceRow): string => PROVIDER_TITLES[s.provider as ProviderName] ?? s.provider;

const CONFIRM_TEXT: Record<string, (s: ServiceRow) => string> = {
  suspend: (s) => `Suspend this licence at ${providerTitle(s)}? The customer's software stops working until it is unsuspended.`,
  unsuspend: (s) => `Unsuspend this licence at ${providerTitle(s)}?`,
  "change-ip": (s) => `Move this licence to another IP? ${providerTitle(s)} binds it to the new address; the old one stops working.`,
  "resend-install-mail": (s) => `Send the install mail to ${s.customer_email ?? "the customer"} again? A new mail goes out, however often it was sent before.`,
  "reset-ip-changes": (s) =>
    `Reset the IP-change counter (${s.ip_changes} made) to 0? The customer may then change the IP as often as the product allows a new licence.`,
};

const TITLES: Record<string, string> = {
  "change-ip": "Change IP",
  "resend-install-mail": "Resend the install mail of",
  "reset-ip-changes": "Reset the IP changes of",
};

/**
 * The confirmation step of a licence action: a form to post, no script. `requestId`: the
 * resend's id for this form, so a form posted twice (a double-click) queues one mail.
 */
export function confirmLicenceAction(session: ConsoleSession, s: ServiceRow, action: string, o: { error?: { field: string; message: string }; requestId?: string } = {}): Html {
  return page({
    title: `Confirm: ${action}`,
    session,
    section: "licences",
    body: html`<h1>${TITLES[action] ?? action[0]!.toUpperCase() + action.slice(1)} licence ${s.service_id}</h1>
      <p>${CONFIRM_TEXT[action]?.(s)}</p>
      <dl class="facts"><dt>Service</dt><dd>${s.service_id}</dd><dt>IP now</dt><dd>${s.ip}</dd><dt>Status</dt><dd>${statusBadge(s.status)}</dd></dl>
      ${o.error ? html`<p class="notice bad" role="alert">${o.error.field}: ${o.error.message}</p>` : ""}
      <form method="post" action="${licenceHref(s.service_id)}/${action}" class="stack">
        ${csrfField(session)}
        ${action === "change-ip" ? html`<label for="ip">New IP address <input id="ip" name="ip" required inputmode="decimal" autocomplete="off"></label>` : ""}
        ${o.requestId ? html`<input type="hidden" name="request_id" value="${o.requestId}">` : ""}
        <div class="actions"><button type="submit">Confirm</button><a class="button secondary" href="${licenceHref(s.service_id)}">Cancel</a></div>
      </form>`,
  });
}
