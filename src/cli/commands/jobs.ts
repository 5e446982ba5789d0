import { Option, type Command } from "commander";
import type { jobView } from "../../admin/views.js";
import { JOB_STATES, type JobState } from "../../vocabulary/jobs.js";
import { CliError, EXIT, emit, table, type Output } from "../output.js";

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

export function jobsCommands(program: Command, output: (cmd: Command) => Output): void {
  const jobs = program.command("jobs").description("the durable job queue: what the bridge is doing, and what waits for you");

  jobs
    .command("list")
    .description("list jobs, newest first (at most 500), as GET /admin/jobs does")
    .addOption(new Option("--state <state>", "only jobs in this state").choices(JOB_STATES))
    .option("--service-id <id>", "only this billing-panel service's jobs")
    .option("--kind <kind>", "only jobs of this kind (e.g. register, renew)")
    .option("--json", "machine-readable output: {\"jobs\": [...]}")
    .action(async (opts: { state?: JobState; serviceId?: string; kind?: string }, cmd: Command) => {
      const { jobView, configOrExit, withBridgeStore } = await deps();
      const config = configOrExit();
      const list = await withBridgeStore(config, async (store) =>
        (await store.jobs.list({ state: opts.state, serviceId: opts.serviceId, kind: opts.kind })).map(jobView),
      );
      emit(output(cmd), { jobs: list }, () => [table(jobRows(list)), `${list.length} job(s)`].join("\n"));
    });

  jobs
    .command("retry <id>")
    .description("queue a failed or blocked job again with fresh attempts; a running service picks it up within a second")
    .option("--json", "machine-readable output: {\"job\": {...}}")
    .action(async (rawId: string, _opts: unknown, cmd: Command) => {
      const [{ JOB_ID_RULE, jobIdSchema }, { jobView, configOrExit, withBridgeStore }] = await Promise.all([import("../../admin/admin-routes.js"), deps()]);
      const id = jobIdSchema.safeParse(rawId);
      if (!id.success) throw new CliError(`id ${JOB_ID_RULE}, got "${rawId}"`, EXIT.usage);
      const config = configOrExit();
      const retried = await withBridgeStore(config, async (store) => {
        const job = await store.jobs.get(id.data);
        if (!job) throw new CliError(`unknown job ${id.data} (see \`license-bridge jobs list\`)`);
        const again = await store.jobs.retry(id.data);
        if (!again) throw new CliError(`job ${id.data} is ${job.state}; only failed or blocked jobs can be retried`);
        return jobView(again);
      });
      emit(output(cmd), { job: retried }, () =>
        `job ${retried.id} (${retried.kind}${retried.service_id ? `, service ${retried.service_id}` : ""}) queued again; a running service picks it up`,
      );
    });
}
