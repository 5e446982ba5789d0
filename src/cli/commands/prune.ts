import type { Command } from "commander";
import type { PruneReport } from "../../retention/retention.js";
import type { CliContext } from "../io.js";
import { emit, table } from "../output.js";

export function pruneCommand(program: Command, cli: CliContext): void {
  program
    .command("prune")
    .description(
      "remove what RETENTION_DAYS lets go (the service does it daily): succeeded and cancelled jobs, processed events' payloads, sent mail records, outbox files; audit entries older than AUDIT_RETENTION_DAYS; with TERMINATED_RETENTION_DAYS, the records of services terminated longer ago",
    )
    .option("--dry-run", "count what would go, remove nothing")
    .option(
      "--json",
      "machine-readable output: {dry_run, retention_days, before, jobs, event_payloads, mails, outbox_files, terminated_services, audit_retention_days, audit_before, audit_entries}",
    )
    .addHelpText(
      "after",
      "\nKept whatever their age: every webhook id (a replay stays a duplicate), queued, running, blocked and failed\n" +
        "jobs with their charge intents, mails not yet sent, history, and every other table; only\n" +
        "TERMINATED_RETENTION_DAYS, when set, removes a terminated service's history and events (its row and its\n" +
        "events' webhook ids stay).",
    )
    .action(async (opts: { dryRun?: boolean }, cmd: Command) => {
      // Imported when the command runs (see buildProgram).
      const [{ resolve }, { systemClock }, { prune }, { configOrExit }, { withBridgeStore }, { cliActor, draftOf, requireRole }, { AUDIT_ACTIONS }] = await Promise.all([
        import("node:path"),
        import("../../clock.js"),
        import("../../retention/retention.js"),
        import("../context.js"),
        import("../store.js"),
        import("../audit-trail.js"),
        import("../../vocabulary/audit.js"),
      ]);
      const o = cli.output(cmd);
      const config = configOrExit(cli.io);
      const dryRun = opts.dryRun === true;
      const actor = cliActor(config, (cmd.optsWithGlobals() as { as?: string }).as, cli.io.env);
      const report = await withBridgeStore(config, cli.io, async (store) => {
        const run = () =>
          prune(
            { store, clock: systemClock, days: config.RETENTION_DAYS, terminatedDays: config.TERMINATED_RETENTION_DAYS, auditDays: config.AUDIT_RETENTION_DAYS, outboxDir: resolve(config.dataDir, "outbox") },
            { dryRun },
          );
        // Counting removes nothing and anyone may look; removing is an admin's, and audited.
        if (dryRun) return run();
        await requireRole(store, actor, "admin", AUDIT_ACTIONS.prune);
        // Prune runs in many small transactions (it must not hold the writer): one entry for the run, as it ended.
        try {
          const done = await run();
          await store.audit.record({ ...draftOf(actor, AUDIT_ACTIONS.prune, prunedSummary(done)), outcome: "ok" });
          return done;
        } catch (err) {
          await store.audit.record({ ...draftOf(actor, AUDIT_ACTIONS.prune, (err as Error).message), outcome: "failed" });
          throw err;
        }
      });
      emit(o, report, () => humanReport(report));
    });
}

/** What a run removed, for its audit entry. */
const prunedSummary = (r: PruneReport) =>
  `older than ${r.before}: ${r.jobs} job(s), ${r.event_payloads} event payload(s), ${r.mails} mail record(s), ${r.outbox_files} outbox file(s)` +
  (r.terminated_services > 0 ? `, the records of ${r.terminated_services} terminated service(s)` : "") +
  (r.audit_entries > 0 ? `, ${r.audit_entries} audit entr${r.audit_entries === 1 ? "y" : "ies"} older than ${r.audit_before}` : "");

function humanReport(r: PruneReport): string {
  const rows = [
    { what: "succeeded and cancelled jobs", count: r.jobs },
    { what: "processed events' payloads", count: r.event_payloads },
    { what: "sent mail records", count: r.mails },
    { what: "outbox .eml files", count: r.outbox_files },
    { what: "terminated services' records (TERMINATED_RETENTION_DAYS)", count: r.terminated_services },
    ...(r.audit_retention_days === null ? [] : [{ what: `audit entries older than ${r.audit_before} (AUDIT_RETENTION_DAYS=${r.audit_retention_days})`, count: r.audit_entries }]),
  ];
  const verb = r.dry_run ? "would be pruned" : "pruned";
  return [table(rows, ["what", "count"]), "", `older than ${r.before} (RETENTION_DAYS=${r.retention_days}): ${verb}${r.dry_run ? "; run without --dry-run to prune" : ""}`].join("\n");
}
