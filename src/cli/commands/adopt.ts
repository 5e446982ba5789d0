import type { Command } from "commander";
import type { AdoptionPlan } from "../../adoption/plan.js";
import type { CliContext } from "../io.js";
import { CliError, emit, table } from "../output.js";

/** Problems shown before "... and N more": enough to see the pattern of a bad export. */
const MAX_PROBLEMS = 20;

export function adoptCommand(program: Command, cli: CliContext): void {
  program
    .command("adopt")
    .description("take over a running book: a panel's services (CSV or JSON) against the reseller's licence list; prints the plan")
    .argument("<file>", `CSV with a header line (service_identifier, package_identifier, ip, customer_email, customer_name, billing_cycle, next_due_date, status), or JSON: an array of such rows or {"services": [...]}`)
    .option("--apply", "write the adoptions: the services as the reseller holds them, suspended where the panel has them suspended; buys nothing, mails nothing")
    .option("--buy", "with --apply: order the licences the reseller does not hold, through the job queue (charges the balance)")
    .option("--mail", "with --apply: mail the customers their install command")
    .option("--json", 'machine-readable output: {"plan": [...], "orphans": [...]}, as POST /admin/adopt')
    .addHelpText(
      "after",
      "\nActions: adopt (the reseller holds it, free, as the product wants it), buy (it does not, and the panel has the service\n" +
        "not suspended), conflict (for a person: the reason says why), managed (the bridge has the service already). The plan is\n" +
        "what --apply does, row by row. A second run finds what the first wrote managed.",
    )
    .action(async (file: string, opts: { apply?: boolean; buy?: boolean; mail?: boolean }, cmd: Command) => {
      // Imported when the command runs (see buildProgram).
      const [{ readFileSync }, { resolve }, { decodeImport, readImport }, { runAdoption }, { pricesOf }, { createIntake }, { configOrExit }, { listsCall, listSourcesFromConfig }, { withBridgeStore }, { cliActor, draftOf, requireRole }, { AUDIT_ACTIONS }] =
        await Promise.all([
          import("node:fs"),
          import("node:path"),
          import("../../adoption/import-file.js"),
          import("../../adoption/adopt.js"),
          import("../../catalog/prices.js"),
          import("../../intake/intake.js"),
          import("../context.js"),
          import("../providers-from-config.js"),
          import("../store.js"),
          import("../audit-trail.js"),
          import("../../vocabulary/audit.js"),
        ]);
      const o = cli.output(cmd);
      if ((opts.buy || opts.mail) && !opts.apply) throw new CliError(`${opts.buy ? "--buy" : "--mail"} takes effect only with --apply`, 2);
      let bytes: Buffer;
      try {
        bytes = readFileSync(resolve(cli.io.cwd, file));
      } catch (err) {
        throw new CliError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
      }
      // Checked as bytes first: a binary file's problems would quote its bytes to the terminal.
      const decoded = decodeImport(bytes);
      if (!decoded.ok) throw new CliError(`${file}: ${decoded.problem}`);
      const imported = readImport(decoded.text);
      if (!imported.ok) {
        const shown = imported.problems.slice(0, MAX_PROBLEMS).map((p) => `  ${file}: ${p}`);
        const more = imported.problems.length > MAX_PROBLEMS ? [`  ... and ${imported.problems.length - MAX_PROBLEMS} more`] : [];
        throw new CliError([`${file}: ${imported.problems.length} problem(s), nothing planned:`, ...shown, ...more].join("\n"));
      }
      const config = configOrExit(cli.io);
      const actor = cliActor(config, (cmd.optsWithGlobals() as { as?: string }).as, cli.io.env);
      const lists = listSourcesFromConfig(config, cli);
      const plan = await withBridgeStore(config, cli.io, async (store) => {
        // Adoption is an admin's (as POST /admin/adopt); planning alone changes nothing.
        if (opts.apply) await requireRole(store, actor, "admin", AUDIT_ACTIONS.adoptApply);
        return listsCall(() =>
          runAdoption(
            {
              store,
              ...lists,
              catalog: config.catalog,
              prices: pricesOf(config),
              allowPrivateIps: config.ALLOW_PRIVATE_IPS,
              intake: createIntake({ store, catalog: config.catalog, allowPrivateIps: config.ALLOW_PRIVATE_IPS }),
            },
            imported.rows,
            { apply: opts.apply === true, buy: opts.buy === true, mail: opts.mail === true, ...(opts.apply ? { audit: draftOf(actor, AUDIT_ACTIONS.adoptApply) } : {}) },
          ),
        );
      });
      emit(o, plan, () => human(plan, opts.apply === true));
    });
}

const sum = (xs: (number | null)[]) => Math.round(xs.reduce<number>((a, x) => a + (x ?? 0), 0) * 100) / 100;

function human(p: AdoptionPlan, applied: boolean): string {
  const count = (a: string) => p.plan.filter((i) => i.action === a).length;
  const buyCost = sum(p.plan.filter((i) => i.action === "buy").map((i) => i.cost));
  const orphanCost = sum(p.orphans.map((o) => o.monthly_cost));
  const unpriced = p.orphans.filter((o) => o.monthly_cost === null).length;
  return [
    table(p.plan as unknown as Record<string, unknown>[], ["service_identifier", "action", "cost", "provider", "reason"]),
    "",
    `orphans: licences a configured provider holds that no row and no service claims (${p.orphans.length})`,
    table(p.orphans as unknown as Record<string, unknown>[], ["ip", "type", "provider", "monthly_cost"]),
    `total monthly cost of the orphans: ${orphanCost}${unpriced ? ` (${unpriced} without a known price)` : ""}`,
    "",
    `${count("adopt")} adopt, ${count("buy")} buy (cost ${buyCost}), ${count("conflict")} conflict, ${count("managed")} managed` +
      (applied ? "; applied" : "; nothing written: run again with --apply to adopt (and --buy to order what is missing)"),
  ].join("\n");
}
