import type { Command } from "commander";
import type { CliContext } from "../io.js";
import { CliError, EXIT, emit, table } from "../output.js";

/** `license-bridge forecast`: GET /admin/forecast from the command line. */
export function forecastCommand(program: Command, cli: CliContext): void {
  program
    .command("forecast")
    .description("the renewals due in the next days, each provider's cost, and whether the reseller balance covers the reseller's")
    .option("--days <n>", "how many days ahead, 1-366", "7")
    .option("--json", 'machine-readable output: {"days", "balance", "due": [...], "total_cost", "shortfall", "by_provider"}, as GET /admin/forecast')
    .action(async (opts: { days: string }, cmd: Command) => {
      const [{ DAYS_RULE, forecastQuerySchema }, { forecastRenewals, renewalPrices }, { pricesOf }, { createBalanceReader, ownAccountId }, { configOrExit }, { withBridgeStore }, { systemClock }, { v1ClientFromConfig }] =
        await Promise.all([
          import("../../admin/forecast-routes.js"),
          import("../../renewals/forecast.js"),
          import("../../catalog/prices.js"),
          import("../../reseller/balance.js"),
          import("../context.js"),
          import("../store.js"),
          import("../../clock.js"),
          import("../upstream-from-config.js"),
        ]);
      const q = forecastQuerySchema.safeParse({ days: opts.days });
      if (!q.success) throw new CliError(`--days ${DAYS_RULE}, got "${opts.days}"`, EXIT.usage);
      const config = configOrExit(cli.io);
      // The balance as the service reads it (admin token, own account); unknown, with the reason, when it cannot be read.
      const accountId = ownAccountId(config);
      let client: ReturnType<typeof v1ClientFromConfig> | null = null;
      let unavailable: string | undefined;
      try {
        client = accountId === undefined ? null : v1ClientFromConfig(config, cli, "admin");
      } catch (err) {
        unavailable = (err as Error).message;
      }
      const balance = createBalanceReader({ client, accountId, unavailable });
      const f = await withBridgeStore(config, cli.io, (store) =>
        forecastRenewals({ store, balance, prices: renewalPrices(pricesOf(config), config.catalog), leadDays: config.RENEWAL_LEAD_DAYS, clock: systemClock }, q.data.days ?? 7),
      );
      const money = (n: number | null) => (n === null ? "unknown" : String(n));
      emit(cli.output(cmd), f, () =>
        [
          f.due.length ? table(f.due.map((d) => ({ ...d }))) : `no renewal is due in the next ${f.days} day(s)`,
          `${f.due.length} renewal(s) in ${f.days} day(s): cost ${money(f.total_cost)}, reseller balance ${money(f.balance)}, shortfall ${money(f.shortfall)}` +
            (f.unpriced_products.length ? ` (cost unknown: catalogue product(s) ${f.unpriced_products.join(", ")} have no price_per_month)` : ""),
          // Each provider's money apart; only the reseller's is held against its balance.
          ...Object.entries(f.by_provider).map(([provider, c]) => `  ${provider}: ${c.renewals} renewal(s), cost ${money(c.cost)}`),
        ].join("\n"),
      );
    });
}
