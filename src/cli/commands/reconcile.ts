import type * as CliProgress from "cli-progress";
import type { Command } from "commander";
import type { DriftItem, ReconcileProgress } from "../../reconcile/reconcile.js";
import type { CliContext, CliWritable } from "../io.js";
import { CliError, emit, table } from "../output.js";

/** What the action needs, imported when it runs (see buildProgram). */
async function deps() {
  const [cliProgress, { reconcile }, { configOrExit }, { listsCall, listSourcesFromConfig }, { withBridgeStore }, trail, { AUDIT_ACTIONS }, { reconcileSummary }] = await Promise.all([
    import("cli-progress"),
    import("../../reconcile/reconcile.js"),
    import("../context.js"),
    import("../providers-from-config.js"),
    import("../store.js"),
    import("../audit-trail.js"),
    import("../../vocabulary/audit.js"),
    import("../../admin/reconcile-routes.js"),
  ]);
  return { cliProgress, reconcile, configOrExit, listsCall, listSourcesFromConfig, withBridgeStore, trail, AUDIT_ACTIONS, reconcileSummary };
}

/** Below this many services a run is over before a bar would be worth drawing. */
const PROGRESS_MIN = 25;

/** A progress bar on the run's stderr when a person is watching (it is a terminal) and there is a lot to do. */
function progressBar({ Presets, SingleBar }: typeof CliProgress, stderr: CliWritable): { onProgress: (p: ReconcileProgress) => void; stop: () => void } {
  if (stderr.isTTY !== true) return { onProgress: () => {}, stop: () => {} };
  let bar: CliProgress.SingleBar | undefined;
  let phase: ReconcileProgress["phase"] | undefined;
  const stop = () => {
    bar?.stop();
    bar = undefined;
  };
  return {
    onProgress: (p) => {
      if (p.total < PROGRESS_MIN) return;
      if (phase !== p.phase) {
        stop();
        phase = p.phase;
        bar = new SingleBar(
          { stream: stderr, format: `${p.phase === "compare" ? "comparing" : "repairing"} [{bar}] {value}/{total} services`, hideCursor: true },
          Presets.shades_classic,
        );
        bar.start(p.total, 0);
      }
      bar?.update(p.done);
    },
    stop,
  };
}

const columns = ["kind", "service_id", "ip", "type", "provider", "expected", "actual", "fix"];
const rows = (items: DriftItem[]) => items as unknown as Record<string, unknown>[];

export function reconcileCommand(program: Command, cli: CliContext): void {
  program
    .command("reconcile")
    .description("compare the bridge's licences with each configured provider's licence list; --fix repairs what needs no purchase")
    .option("--fix", "suspend at its provider what the bridge has suspended or terminated, and record what the provider has (status, IP, variant); never buys")
    .option("--json", "machine-readable output: {\"drift\": [...], \"fixed\": [...], \"manual\": [...]}, as POST /admin/reconcile")
    .addHelpText(
      "after",
      "\nExit codes: 0 when no drift remains; 1 when drift remains for a person (a purchase, a licence no service\n" +
        "accounts for, a repair that failed, or fixable drift without --fix); 2 usage; 78 configuration.",
    )
    .action(async (opts: { fix?: boolean }, cmd: Command) => {
      const { cliProgress, reconcile, configOrExit, listsCall, listSourcesFromConfig, withBridgeStore, trail, AUDIT_ACTIONS, reconcileSummary } = await deps();
      const o = cli.output(cmd);
      const config = configOrExit(cli.io);
      const actor = trail.cliActor(config, (cmd.optsWithGlobals() as { as?: string }).as, cli.io.env);
      const lists = listSourcesFromConfig(config, cli);
      const progress = progressBar(cliProgress, cli.io.stderr);
      const result = await withBridgeStore(config, cli.io, async (store) => {
        // Looking changes nothing; repairs are an admin's, each written with its entry, the run with one of its own.
        if (opts.fix) await trail.requireRole(store, actor, "admin", AUDIT_ACTIONS.reconcileFix);
        const audit = opts.fix ? trail.draftOf(actor, AUDIT_ACTIONS.reconcileRepair) : undefined;
        try {
          const r = await listsCall(() => reconcile({ store, ...lists }, { fix: opts.fix === true, onProgress: progress.onProgress, audit })).finally(progress.stop);
          if (opts.fix) await store.audit.record({ ...trail.draftOf(actor, AUDIT_ACTIONS.reconcileFix, reconcileSummary(r)), outcome: "ok" });
          return r;
        } catch (err) {
          if (opts.fix) await store.audit.record({ ...trail.draftOf(actor, AUDIT_ACTIONS.reconcileFix, (err as Error).message), outcome: "failed" });
          throw err;
        }
      });
      const remaining = result.drift.length - result.fixed.length;
      emit(o, result, () => {
        if (result.drift.length === 0) return "no drift: the bridge and its providers agree";
        const parts: string[] = [];
        if (!opts.fix) {
          parts.push(table(rows(result.drift), [...columns.slice(0, -1), "fixable", "fix"]));
          const fixable = result.drift.filter((d) => d.fixable).length;
          parts.push("", `${result.drift.length} drift item(s)${fixable ? `; ${fixable} can be repaired without a purchase: run again with --fix` : ""}`);
          return parts.join("\n");
        }
        if (result.fixed.length) parts.push(`fixed (${result.fixed.length}):`, table(rows(result.fixed), columns), "");
        if (result.manual.length) parts.push(`for a person (${result.manual.length}):`, table(rows(result.manual), [...columns, "error"]), "");
        parts.push(`${result.drift.length} drift item(s): ${result.fixed.length} fixed, ${result.manual.length} for a person`);
        return parts.join("\n");
      });
      if (remaining > 0) {
        throw new CliError(`${remaining} drift item(s) remain${result.manual.length ? `, ${result.manual.length} need a person` : ""}`);
      }
    });
}
