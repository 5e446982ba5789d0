import type { Command } from "commander";
import type { CliContext } from "../io.js";
import { CliError, EXIT, emit, table } from "../output.js";

/** `license-bridge audit`: the trail GET /admin/audit answers, with the same filters and paging. */
export function auditCommand(program: Command, cli: CliContext): void {
  program
    .command("audit")
    .description("who did what through the admin API, the CLI and the console, newest first (as GET /admin/audit)")
    .option("--actor <name>", "only this operator's entries (admin is ADMIN_TOKEN; the CLI's own are cli:<user>)")
    .option("--service <id>", "only entries about this service")
    .option("--limit <n>", "entries per page, 1-1000 (default 100)")
    .option("--cursor <cursor>", "the next_cursor of the page before")
    .option("--all", "every page")
    .option("--json", 'machine-readable output: {"audit": [...], "next_cursor", "total"}')
    .action(async (opts: { actor?: string; service?: string; limit?: string; cursor?: string; all?: boolean }, cmd: Command) => {
      const [{ auditPage, auditQuerySchema }, { configOrExit }, { withBridgeStore }, { fieldErrors }] = await Promise.all([
        import("../../admin/audit-routes.js"),
        import("../context.js"),
        import("../store.js"),
        import("../../validation/field-errors.js"),
      ]);
      const raw = { actor: opts.actor, service_id: opts.service, limit: opts.limit, cursor: opts.cursor };
      const q = auditQuerySchema.safeParse(Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined)));
      if (!q.success) {
        const [field, messages] = Object.entries(fieldErrors(q.error))[0]!;
        const flag = field === "service_id" ? "--service" : `--${field}`;
        throw new CliError(`${flag} ${messages[0]}`, EXIT.usage);
      }
      const config = configOrExit(cli.io);
      const page = await withBridgeStore(config, cli.io, async (store) => {
        const first = await auditPage(store.audit, q.data);
        if (!opts.all) return first;
        const audit = [...first.audit];
        for (let next = first.next_cursor; next !== null; ) {
          const more = await auditPage(store.audit, { ...q.data, cursor: Number(next) });
          audit.push(...more.audit);
          next = more.next_cursor;
        }
        return { audit, next_cursor: null, total: first.total };
      });
      emit(cli.output(cmd), page, () =>
        [
          table(page.audit.map((e) => ({ ...e })), ["at", "actor", "action", "service_id", "job_id", "outcome", "detail"]),
          `${page.audit.length} of ${page.total} entr${page.total === 1 ? "y" : "ies"}${page.next_cursor ? `; next page: --cursor ${page.next_cursor}` : ""}`,
        ].join("\n"),
      );
    });
}
