import type { Command } from "commander";
import type { CliContext } from "../io.js";
import { CliError, emit } from "../output.js";

export function migrateCommand(program: Command, cli: CliContext): void {
  program
    .command("migrate")
    .description("apply pending database migrations (each in its own transaction)")
    .option("--status", "only show the database and code versions")
    .option("--json", "machine-readable output")
    .action(async (opts: { status?: boolean }, cmd: Command) => {
      // Imported when the command runs (see buildProgram).
      const [{ systemClock }, { databaseLocation, openStore }, { DatabaseNewerThanCodeError }, { configOrExit }, { cliLogger }] = await Promise.all([
        import("../../clock.js"),
        import("../../store/open.js"),
        import("../../store/store.js"),
        import("../context.js"),
        import("../logger.js"),
      ]);
      const o = cli.output(cmd);
      const config = configOrExit(cli.io);
      const database = databaseLocation(config);
      const store = await openStore(config, { clock: systemClock, logger: cliLogger(config, cli.io.stderr, "warn"), migrate: false });
      try {
        if (opts.status) {
          const s = await store.migrationStatus();
          const data = { database, database_version: s.databaseVersion, code_version: s.codeVersion, pending: s.pending.map((m) => m.id) };
          if (s.databaseVersion > s.codeVersion) throw new DatabaseNewerThanCodeError(s.databaseVersion, s.codeVersion);
          return emit(o, data, () => `database ${database}: version ${s.databaseVersion}, code ${s.codeVersion}, ${s.pending.length} pending`);
        }
        const applied = await store.migrate();
        emit(o, { database, applied }, () =>
          applied.length ? applied.map((m) => `applied ${String(m.id).padStart(3, "0")}_${m.name}`).join("\n") : "database is up to date",
        );
      } catch (err) {
        if (err instanceof DatabaseNewerThanCodeError) throw new CliError(err.message);
        throw err;
      } finally {
        await store.close();
      }
    });
}
