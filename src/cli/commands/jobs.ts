import { Option, type Command } from "commander";
import type { jobView } from "../../admin/views.js";
import { JOB_STATES, type JobState } from "../../vocabulary/jobs.js";
import type { CliContext } from "../io.js";
import { CliError, EXIT, emit, table } from "../output.js";
import { pageRequest, printListing, withPaging, type PagingOptions } from "../paging.js";

/** What the actions need, imported when one runs (see buildProgram). */
async function deps() {
  const [{ jobView }, { configOrExit }, { withBridgeStore }] = await Promise.all([import("../../admin/views.js"), import("../context.js"), import("../store.js")]);
  return { jobView, configOrExit, withBridgeStore };
}

type JobRow = ReturnType<typeof jobView>;

function jobRows(list: JobRow[]) {
  return list.map((j) => ({
    id: j.id,
    kind: j.kind,
    service_id: j.service_id,
    state: j.state,
    attempts: `${j.attempts}/${j.max_attempts}`,
    run_at: j.run_at,
    last_error: j.last_error,
  }));
}

export function jobsCommands(program: Command, cli: CliContext): void {
  const jobs = program.command("jobs").description("the durable job queue: what the bridge is doing, and what waits for you");

  withPaging(
    jobs
      .command("list")
      .description("list jobs, newest first, a page at a time, as GET /admin/jobs does")
      .addOption(new Option("--state <state>", "only jobs in this state").choices(JOB_STATES))
      .option("--service-id <id>", "only this billing-panel service's jobs")
      .option("--kind <kind>", "only jobs of this kind (e.g. register, renew)"),
  )
    .option("--json", "machine-readable output: {\"jobs\": [...], \"next_cursor\", \"total\"}")
    .action(async (opts: { state?: JobState; serviceId?: string; kind?: string } & PagingOptions, cmd: Command) => {
      const [{ jobView, configOrExit, withBridgeStore }, { idFilterSchema }, { checkedAsApi }] = await Promise.all([deps(), import("../../admin/filters.js"), import("../arguments.js")]);
      const serviceId = checkedAsApi(idFilterSchema, "--service-id", opts.serviceId);
      const kind = checkedAsApi(idFilterSchema, "--kind", opts.kind);
      const first = await pageRequest("jobs", opts);
      const config = configOrExit(cli.io);
      await withBridgeStore(config, cli.io, (store) =>
        printListing(
          cli.output(cmd),
          opts,
          first,
          async (page) => {
            const p = await store.jobs.page({ state: opts.state, serviceId, kind, ...page });
            return { ...p, items: p.items.map(jobView) };
          },
          { key: "jobs", noun: "job(s)", table: (list) => table(jobRows(list)) },
        ),
      );
    });

  jobs
    .command("retry <id>")
    .description("queue a failed or blocked job again with fresh attempts; a running service picks it up within a second")
    .option("--json", "machine-readable output: {\"job\": {...}}")
    .action(async (rawId: string, _opts: unknown, cmd: Command) => {
      const [{ JOB_ID_RULE, jobIdSchema }, { jobView, configOrExit, withBridgeStore }, { cliActor, draftOf, requireRole }, { AUDIT_ACTIONS }] = await Promise.all([
        import("../../admin/admin-routes.js"),
        deps(),
        import("../audit-trail.js"),
        import("../../vocabulary/audit.js"),
      ]);
      const id = jobIdSchema.safeParse(rawId);
      if (!id.success) throw new CliError(`id ${JOB_ID_RULE}, got "${rawId}"`, EXIT.usage);
      const config = configOrExit(cli.io);
      const actor = cliActor(config, (cmd.optsWithGlobals() as { as?: string }).as, cli.io.env);
      const retried = await withBridgeStore(config, cli.io, async (store) => {
        const job = await store.jobs.get(id.data);
        await requireRole(store, actor, "operator", AUDIT_ACTIONS.jobRetry, { job_id: id.data, service_id: job?.serviceId ?? null });
        // The retry and its entry (ok, or refused: no such job, or not failed or blocked) commit together.
        const again = await store.jobs.retry(id.data, draftOf(actor, AUDIT_ACTIONS.jobRetry));
        if (!job) throw new CliError(`unknown job ${id.data} (see \`license-bridge jobs list\`)`);
        if (!again) throw new CliError(`job ${id.data} is ${job.state}; only failed or blocked jobs can be retried`);
        return jobView(again);
      });
      emit(cli.output(cmd), { job: retried }, () =>
        `job ${retried.id} (${retried.kind}${retried.service_id ? `, service ${retried.service_id}` : ""}) queued again; a running service picks it up`,
      );
    });

  jobs
    .command("cancel <id>")
    .description(
      "cancel a failed or blocked job: it runs no more and no longer holds its service's later jobs back (a job that may have charged is refused: retry or reconcile it)",
    )
    .option("--json", "machine-readable output: {\"job\": {...}}")
    .action(async (rawId: string, _opts: unknown, cmd: Command) => {
      const [{ JOB_ID_RULE, jobIdSchema }, { jobView, configOrExit, withBridgeStore }, { cliActor, draftOf, requireRole }, { AUDIT_ACTIONS }, { cancelJob }] = await Promise.all([
        import("../../admin/admin-routes.js"),
        deps(),
        import("../audit-trail.js"),
        import("../../vocabulary/audit.js"),
        import("../../admin/direct-actions.js"),
      ]);
      const id = jobIdSchema.safeParse(rawId);
      if (!id.success) throw new CliError(`id ${JOB_ID_RULE}, got "${rawId}"`, EXIT.usage);
      const config = configOrExit(cli.io);
      const actor = cliActor(config, (cmd.optsWithGlobals() as { as?: string }).as, cli.io.env);
      const cancelled = await withBridgeStore(config, cli.io, async (store) => {
        const job = await store.jobs.get(id.data);
        await requireRole(store, actor, "operator", AUDIT_ACTIONS.jobCancel, { job_id: id.data, service_id: job?.serviceId ?? null });
        // The cancel and its entry (ok, or refused saying why) commit together.
        const r = await cancelJob(store, draftOf(actor, AUDIT_ACTIONS.jobCancel), id.data);
        if (!r.ok) throw new CliError(r.code === "unknown_job" ? `unknown job ${id.data} (see \`license-bridge jobs list\`)` : r.message);
        return jobView(r.value);
      });
      emit(cli.output(cmd), { job: cancelled }, () =>
        `job ${cancelled.id} (${cancelled.kind}${cancelled.service_id ? `, service ${cancelled.service_id}` : ""}) cancelled; it will not run again`,
      );
    });
}
