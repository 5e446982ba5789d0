import { html, type Html } from "../html.js";
import { mayAct } from "../../admin/actions.js";
import type { ReconcileResult } from "../../reconcile/reconcile.js";
import type { ConsoleSession } from "../session.js";
import type { AdminFunctions } from "../admin-functions.js";
import { csrfField, page } from "./layout.js";
import { PROVIDER_TITLES, type ProviderName } from "../../vocabulary/providers.js";

/** Reconcile: the drift report (any role), and its repair (admin), each a form. */
export function reconcilePage(session: ConsoleSession, result?: ReconcileResult, fixed?: boolean): Html {
  const drift = (items: { kind: string; provider?: ProviderName; service_id?: string | null; ip?: string; type?: string }[]) =>
    html`<div class="table-wrap"><table><thead><tr><th>Kind</th><th>Provider</th><th>Service</th><th>IP</th><th>Type</th></tr></thead><tbody>${items.map(
      (d) => html`<tr><td>${d.kind}</td><td>${d.provider ? PROVIDER_TITLES[d.provider] : ""}</td><td>${d.service_id ?? ""}</td><td>${d.ip ?? ""}</td><td>${d.type ?? ""}</td></tr>`,
    )}</tbody></table></div>`;
  return page({
    title: "Reconcile",
    session,
    section: "reconcile",
    body: html`<h1>Reconcile</h1>
      <p>Compares the bridge's licences with each configured provider's licence list (the reseller's, cPanel Manage2's, CloudLinux CLN's). The repair fixes what needs no purchase; it never buys anything.</p>
      <div class="actions">
        <form method="post" action="/console/reconcile" class="inline">${csrfField(session)}<input type="hidden" name="fix" value="false"><button type="submit">Show the drift</button></form>
        ${mayAct(session.actor, "reconcileFix")
          ? html`<form method="post" action="/console/reconcile" class="inline">${csrfField(session)}<input type="hidden" name="fix" value="true"><button type="submit" class="danger">Repair the drift</button></form>`
          : html`<span class="muted">Repairs need the admin role.</span>`}
      </div>
      ${result
        ? html`<h2>Drift (${result.drift.length})</h2>${result.drift.length === 0 ? html`<p class="ok">None: the bridge and its providers agree.</p>` : drift(result.drift)}
          ${fixed ? html`<h2>Repaired (${result.fixed.length})</h2>${result.fixed.length === 0 ? html`<p class="muted">Nothing.</p>` : drift(result.fixed)}` : ""}`
        : ""}`,
  });
}

/** Adoption: a service list in, the plan out, applied by an admin. */
export function adoptionPage(session: ConsoleSession, o: { text?: string; plan?: unknown; error?: string; applied?: boolean } = {}): Html {
  return page({
    title: "Adoption",
    session,
    section: "adoption",
    body: html`<h1>Adoption</h1>
      <p>Paste the panel's service list (JSON, as <code>POST /admin/adopt</code> takes it) to see what the bridge would adopt, buy or leave. Applying buys and mails nothing; a service the panel has suspended is adopted suspended (its licences suspended at their provider where they are active) and never bought.</p>
      ${o.error ? html`<p class="notice bad" role="alert">${o.error}</p>` : ""}
      <form method="post" action="/console/adoption" class="stack">${csrfField(session)}
        <label for="services">Service list <textarea id="services" name="services" required>${o.text ?? ""}</textarea></label>
        <div class="actions"><button type="submit" name="apply" value="false">Show the plan</button>
        ${mayAct(session.actor, "adopt") ? html`<button type="submit" name="apply" value="true" class="danger">Apply</button>` : ""}</div>
      </form>
      ${o.plan ? html`<h2>${o.applied ? "Applied" : "Plan"}</h2><pre>${JSON.stringify(o.plan, null, 2)}</pre>` : ""}`,
  });
}

/** The audit trail, filtered by operator and service. */
export function auditPage(session: ConsoleSession, o: { actor: string; service_id: string; entries: Awaited<ReturnType<AdminFunctions["audit"]>> }): Html {
  const rows = o.entries.audit;
  return page({
    title: "Audit",
    session,
    section: "audit",
    body: html`<h1>Audit</h1>
      <form method="get" action="/console/audit" class="search" role="search">
        <label for="actor">Operator <input id="actor" name="actor" value="${o.actor}"></label>
        <label for="service_id">Service id <input id="service_id" name="service_id" value="${o.service_id}"></label>
        <button type="submit">Filter</button>
      </form>
      <div class="table-wrap"><table><thead><tr><th>When</th><th>Operator</th><th>Action</th><th>Service</th><th>Job</th><th>Outcome</th></tr></thead><tbody>${rows.map(
        (e) => html`<tr><td>${e.at}</td><td>${e.actor}</td><td>${e.action}</td><td>${e.service_id ?? ""}</td><td>${e.job_id ?? ""}</td><td>${e.outcome}</td></tr>`,
      )}</tbody></table></div>
      ${o.entries.next_cursor
        ? html`<nav class="pager"><a rel="next" href="/console/audit?${new URLSearchParams({ actor: o.actor, service_id: o.service_id, cursor: o.entries.next_cursor }).toString()}">Next page</a></nav>`
        : ""}`,
  });
}
