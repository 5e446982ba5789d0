import { Option, type Command } from "commander";
import type { licenseView } from "../../admin/views.js";
import { SERVICE_STATUSES, type ServiceStatus } from "../../vocabulary/service-statuses.js";
import { CliError, emit, table, type Output } from "../output.js";

/** What the actions need, imported when one runs (see buildProgram). */
async function deps() {
  const [{ historyView, licenseView }, { configOrExit }, { withBridgeStore }] = await Promise.all([
    import("../../admin/views.js"),
    import("../context.js"),
    import("../store.js"),
  ]);
  return { historyView, licenseView, configOrExit, withBridgeStore };
}

type License = ReturnType<typeof licenseView>;

function licenseRows(list: License[]) {
  return list.map((l) => ({
    service_id: l.service_id,
    type: l.type ?? `bundle ${l.bundle ?? "?"}`,
    variant: l.variant,
    ip: l.ip,
    status: l.status,
    expires_at: l.expires_at,
    paid_until: l.paid_until,
    last_error: l.last_error,
  }));
}

export function licensesCommands(program: Command, output: (cmd: Command) => Output): void {
  const licenses = program.command("licenses").description("the licences the bridge keeps (one per billing-panel service)");

  licenses
    .command("list")
    .description("list licences, as GET /admin/licenses does")
    .addOption(new Option("--status <status>", "only licences in this status").choices(SERVICE_STATUSES))
    .option("--json", "machine-readable output: {\"licenses\": [...]}")
    .action(async (opts: { status?: ServiceStatus }, cmd: Command) => {
      const { licenseView, configOrExit, withBridgeStore } = await deps();
      const config = configOrExit();
      const list = await withBridgeStore(config, async (store) => (await store.services.list(opts.status)).map(licenseView));
      emit(output(cmd), { licenses: list }, () =>
        [table(licenseRows(list)), `${list.length} licence(s)${opts.status ? ` ${opts.status}` : ""}`].join("\n"),
      );
    });

  licenses
    .command("show <service-id>")
    .description("one licence with its history, as GET /admin/services/:id does")
    .option("--json", "machine-readable output")
    .action(async (serviceId: string, _opts: unknown, cmd: Command) => {
      const { historyView, licenseView, configOrExit, withBridgeStore } = await deps();
      const config = configOrExit();
      const view = await withBridgeStore(config, async (store) => {
        const svc = await store.services.get(serviceId);
        if (!svc) throw new CliError(`unknown service "${serviceId}": the bridge has no licence for it (see \`license-bridge licenses list\`)`);
        return { ...licenseView(svc), history: (await store.services.history(svc.service_id)).map(historyView) };
      });
      emit(output(cmd), view, () => {
        const { history, customer, companions, ...fields } = view;
        const facts: Record<string, unknown> = {
          ...fields,
          companions: companions.length ? companions.join(", ") : null,
          customer: [customer.name, customer.email && `<${customer.email}>`].filter(Boolean).join(" ") || null,
        };
        const width = Math.max(...Object.keys(facts).map((k) => k.length));
        const lines = Object.entries(facts).map(([k, v]) => `${k.padEnd(width)}  ${v === null || v === undefined ? "-" : String(v)}`);
        return [...lines, "", "history:", table(history, ["at", "action", "detail", "job_id"])].join("\n");
      });
    });
}
