import type { Command } from "commander";
import type { CliContext } from "../io.js";
import { CliError, EXIT, emit, table } from "../output.js";

export function renewCommand(program: Command, cli: CliContext): void {
  program
    .command("renew")
    .description("run the renewal sweep now: queue a renewal for every paid licence due within RENEWAL_LEAD_DAYS")
    .option("--due", "renew what is due (the only mode; required so the intent is explicit)")
    .option("--json", "machine-readable output")
    .action(async (opts: { due?: boolean }, cmd: Command) => {
      if (!opts.due) throw new CliError("say --due to queue the renewals that are due", EXIT.usage);
      // Imported when the command runs (see buildProgram).
      const [{ createSweep }, { configOrExit }, { withBridgeStore }, { cliActor, draftOf, requireRole }, { AUDIT_ACTIONS }] = await Promise.all([
        import("../../renewals/sweep.js"),
        import("../context.js"),
        import("../store.js"),
        import("../audit-trail.js"),
        import("../../vocabulary/audit.js"),
      ]);
      const o = cli.output(cmd);
      const config = configOrExit(cli.io);
      const actor = cliActor(config, (cmd.optsWithGlobals() as { as?: string }).as, cli.io.env);
      const result = await withBridgeStore(config, cli.io, async (store) => {
        await requireRole(store, actor, "operator", AUDIT_ACTIONS.renewDue);
        // Each renewal it queues is written with its audit entry.
        return createSweep(store, config.RENEWAL_LEAD_DAYS).sweep(draftOf(actor, AUDIT_ACTIONS.renewDue));
      });
      emit(o, { queued: result.queued, already_queued: result.alreadyQueued }, () =>
        [
          result.queued.length ? table(result.queued, ["service_id", "term_end", "job_id"]) : "nothing new is due",
          `${result.queued.length} renewal(s) queued, ${result.alreadyQueued} already queued; a running service picks them up`,
        ].join("\n"),
      );
    });
}
