import { html, type Html } from "../html.js";
import type { Job } from "../../vocabulary/jobs.js";
import type { ConsoleSession } from "../session.js";
import { csrfField, page, statusBadge } from "./layout.js";
import { jobsTable } from "./licences.js";
import { hintFor } from "./overview.js";

export const JOB_SECTIONS = ["blocked", "failed", "running", "queued"] as const;

/** Blocked, failed, running and queued jobs, each with its retry where it applies. */
export function jobsPage(session: ConsoleSession, lists: Record<(typeof JOB_SECTIONS)[number], Job[]>): Html {
  return page({
    title: "Jobs",
    session,
    section: "jobs",
    body: html`<h1>Jobs</h1>
      <p class="muted">A blocked job waits for an operator (no balance, a refused token): fix the cause, then retry it. A failed one used up its attempts. Retrying never buys anything twice.
        Cancel one that is no longer wanted: it runs no more and no longer holds back the later jobs of its licence.</p>
      ${JOB_SECTIONS.map((state) => html`<h2>${state[0]!.toUpperCase() + state.slice(1)} (${lists[state].length})</h2>${lists[state].length === 0 ? html`<p class="muted">None.</p>` : jobsTable(session, lists[state])}`)}`,
  });
}

export function confirmRetry(session: ConsoleSession, job: Job): Html {
  const hint = hintFor(job.errorCode);
  return page({
    title: `Retry job ${job.id}`,
    session,
    section: "jobs",
    body: html`<h1>Retry job ${job.id}</h1>
      <dl class="facts"><dt>Kind</dt><dd>${job.kind}</dd><dt>Service</dt><dd>${job.serviceId}</dd><dt>State</dt><dd>${statusBadge(job.state)}</dd>
        <dt>Error</dt><dd>${job.lastError}</dd>${hint ? html`<dt>What to do</dt><dd>${hint}</dd>` : ""}</dl>
      <p>It is queued again with fresh attempts.</p>
      <form method="post" action="/console/jobs/${job.id}/retry" class="stack">${csrfField(session)}
        <div class="actions"><button type="submit">Retry job ${job.id}</button><a class="button secondary" href="/console/jobs">Cancel</a></div></form>`,
  });
}

/** The confirmation of a cancel: what the job was, and that it will not run again. */
export function confirmCancel(session: ConsoleSession, job: Job): Html {
  return page({
    title: `Cancel job ${job.id}`,
    session,
    section: "jobs",
    body: html`<h1>Cancel job ${job.id}</h1>
      <dl class="facts"><dt>Kind</dt><dd>${job.kind}</dd><dt>Service</dt><dd>${job.serviceId}</dd><dt>State</dt><dd>${statusBadge(job.state)}</dd>
        <dt>Error</dt><dd>${job.lastError}</dd></dl>
      <p>It will not run again, and the later jobs of its licence no longer wait for it. The licence's history says who cancelled it.
        A job that may have charged at the reseller cannot be cancelled: retry it, or reconcile.</p>
      <form method="post" action="/console/jobs/${job.id}/cancel" class="stack">${csrfField(session)}
        <div class="actions"><button type="submit">Cancel job ${job.id}</button><a class="button secondary" href="/console/jobs">Keep it</a></div></form>`,
  });
}
