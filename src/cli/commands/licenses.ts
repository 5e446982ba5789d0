import { Option, type Command } from "commander";
import type { licenseView } from "../../admin/views.js";
import { PROVIDER_NAMES, type ProviderName } from "../../vocabulary/provider-names.js";
import { SERVICE_STATUSES, type ServiceStatus } from "../../vocabulary/service-statuses.js";
import type { CliContext } from "../io.js";
import { CliError, emit, table } from "../output.js";
import { pageRequest, printListing, withPaging, type PagingOptions } from "../paging.js";

/** What the actions need, imported when one runs (see buildProgram). */
async function deps() {
  const [{ historyView, licenseView }, { configOrExit }, { withBridgeStore }, { PAGE_LIMIT }] = await Promise.all([
    import("../../admin/views.js"),
    import("../context.js"),
    import("../store.js"),
    import("../../store/store.js"),
  ]);
  return { historyView, licenseView, configOrExit, withBridgeStore, PAGE_LIMIT };
}

type License = ReturnType<typeof licenseView>;

function licenseRows(list: License[]) {
  return list.map((l) => ({
    service_id: l.service_id,
    type: l.type ?? `bundle ${l.bundle ?? "?"}`,
    variant: l.variant,
    ip: l.ip,
    status: l.status,
    provider: l.provider,
    expires_at: l.expires_at,
    paid_until: l.paid_until,
    last_error: l.last_error,
  }));
}

/** A service id as the admin API's paths take it, or a usage error before anything is audited. */
async function checkedServiceId(serviceId: string): Promise<void> {
  const [{ serviceIdSchema }, { checkedAsApi }] = await Promise.all([import("../../admin/ids.js"), import("../arguments.js")]);
  checkedAsApi(serviceIdSchema, "service-id", serviceId);
}

const unknownService = (serviceId: string) => `unknown service "${serviceId}": the bridge has no licence for it (see \`license-bridge licenses list\`)`;

export function licensesCommands(program: Command, cli: CliContext): void {
  const licenses = program.command("licenses").description("the licences the bridge keeps (one per billing-panel service)");

  withPaging(
    licenses
      .command("list")
      .description("list licences by service id, a page at a time, as GET /admin/licenses does")
      .addOption(new Option("--status <status>", "only licences in this status").choices(SERVICE_STATUSES))
      .addOption(new Option("--provider <provider>", "only licences of this provider").choices(PROVIDER_NAMES))
      .option("--q <text>", "find a licence by service id, IP, customer e-mail or licence key (exact)"),
  )
    .option("--json", "machine-readable output: {\"licenses\": [...], \"next_cursor\", \"total\"}")
    .action(async (opts: { status?: ServiceStatus; provider?: ProviderName; q?: string } & PagingOptions, cmd: Command) => {
      const [{ licenseView, configOrExit, withBridgeStore }, { searchSchema }, { checkedAsApi }] = await Promise.all([
        deps(),
        import("../../admin/filters.js"),
        import("../arguments.js"),
      ]);
      const q = checkedAsApi(searchSchema, "--q", opts.q);
      const first = await pageRequest("licenses", opts);
      const config = configOrExit(cli.io);
      await withBridgeStore(config, cli.io, (store) =>
        printListing(
          cli.output(cmd),
          opts,
          first,
          async (page) => {
            const p = await store.services.page({ status: opts.status, provider: opts.provider, q, ...page });
            return { ...p, items: p.items.map(licenseView) };
          },
          { key: "licenses", noun: `licence(s)${opts.status ? ` ${opts.status}` : ""}${opts.provider ? ` of ${opts.provider}` : ""}`, table: (list) => table(licenseRows(list)) },
        ),
      );
    });

  licenses
    .command("show <service-id>")
    .description("one licence with its history, as GET /admin/services/:id does")
    .option("--json", "machine-readable output")
    .action(async (serviceId: string, _opts: unknown, cmd: Command) => {
      const { historyView, licenseView, configOrExit, withBridgeStore, PAGE_LIMIT } = await deps();
      const config = configOrExit(cli.io);
      const view = await withBridgeStore(config, cli.io, async (store) => {
        const svc = await store.services.get(serviceId);
        if (!svc) throw new CliError(unknownService(serviceId));
        // The latest entries in the order they happened, as GET /admin/services/:id shows them.
        const latest = await store.services.historyPage(svc.service_id, { limit: PAGE_LIMIT.default });
        return { ...licenseView(svc), history: latest.items.map(historyView).reverse(), history_total: latest.total, history_next_cursor: latest.nextCursor };
      });
      emit(cli.output(cmd), view, () => {
        const { history, customer, companions, history_next_cursor: older, history_total: _total, ...fields } = view;
        const facts: Record<string, unknown> = {
          ...fields,
          companions: companions.length ? companions.join(", ") : null,
          customer: [customer.name, customer.email && `<${customer.email}>`].filter(Boolean).join(" ") || null,
        };
        const width = Math.max(...Object.keys(facts).map((k) => k.length));
        const lines = Object.entries(facts).map(([k, v]) => `${k.padEnd(width)}  ${v === null || v === undefined ? "-" : String(v)}`);
        const earlier = older ? [`(the latest ${history.length} of ${view.history_total}: GET /admin/services/${view.service_id}/history?cursor=${older} has the earlier ones)`] : [];
        return [...lines, "", "history:", table(history, ["at", "action", "detail", "job_id"]), ...earlier].join("\n");
      });
    });

  licenses
    .command("resend-mail <service-id>")
    .description("queue the install mail of an active licence again, as POST /admin/services/:id/resend-install-mail; a running service sends it")
    .option("--json", "machine-readable output: {\"job_id\": N}")
    .action(async (serviceId: string, _opts: unknown, cmd: Command) => {
      const [{ configOrExit, withBridgeStore }, { cliActor, draftOf, requireRole }, { AUDIT_ACTIONS }, { resendInstallMail }, { queuedMailView }] = await Promise.all([
        deps(),
        import("../audit-trail.js"),
        import("../../vocabulary/audit.js"),
        import("../../admin/direct-actions.js"),
        import("../../admin/views.js"),
      ]);
      await checkedServiceId(serviceId);
      const config = configOrExit(cli.io);
      const actor = cliActor(config, (cmd.optsWithGlobals() as { as?: string }).as, cli.io.env);
      const queued = await withBridgeStore(config, cli.io, async (store) => {
        await requireRole(store, actor, "operator", AUDIT_ACTIONS.serviceResendInstallMail, { service_id: serviceId });
        // The job, its history entry and the audit entry (or the refusal's) commit together.
        const r = await resendInstallMail(store, draftOf(actor, AUDIT_ACTIONS.serviceResendInstallMail), { serviceId });
        if (!r.ok) throw new CliError(r.code === "unknown_service" ? unknownService(serviceId) : r.message);
        return r.value;
      });
      emit(cli.output(cmd), queuedMailView(queued), () => `install mail of service ${serviceId} queued as job ${queued.jobId}, to ${queued.to}; a running service sends it`);
    });

  licenses
    .command("reset-ip-changes <service-id>")
    .description("set the licence's IP-change counter back to 0, as POST /admin/services/:id/reset-ip-changes")
    .option("--json", "machine-readable output: the licence, as GET /admin/licenses lists it")
    .action(async (serviceId: string, _opts: unknown, cmd: Command) => {
      const [{ licenseView, configOrExit, withBridgeStore }, { cliActor, draftOf, requireRole }, { AUDIT_ACTIONS }, { resetIpChanges }] = await Promise.all([
        deps(),
        import("../audit-trail.js"),
        import("../../vocabulary/audit.js"),
        import("../../admin/direct-actions.js"),
      ]);
      await checkedServiceId(serviceId);
      const config = configOrExit(cli.io);
      const actor = cliActor(config, (cmd.optsWithGlobals() as { as?: string }).as, cli.io.env);
      const svc = await withBridgeStore(config, cli.io, async (store) => {
        await requireRole(store, actor, "operator", AUDIT_ACTIONS.serviceResetIpChanges, { service_id: serviceId });
        // The reset, its history entry and its audit entry commit together.
        const r = await resetIpChanges(store, draftOf(actor, AUDIT_ACTIONS.serviceResetIpChanges), serviceId);
        if (!r.ok) throw new CliError(unknownService(serviceId));
        return licenseView(r.value);
      });
      emit(cli.output(cmd), svc, () => `the IP-change counter of service ${svc.service_id} is 0 again`);
    });
}
