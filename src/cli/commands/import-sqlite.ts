import type { Command } from "commander";
import type { CliContext } from "../io.js";
import { CliError, emit, table } from "../output.js";

export function importSqliteCommand(program: Command, cli: CliContext): void {
  program
    .command("import-sqlite <file>")
    .description(
      "copy a SQLite database (the old instance's DATABASE_PATH, its service stopped) into the empty PostgreSQL database at DATABASE_URL, all or nothing",
    )
    .option("--json", 'machine-readable output: {"source", "target", "copied": {"events": n, ...}}')
    .action(async (file: string, _opts: unknown, cmd: Command) => {
      // Imported when the command runs (see buildProgram).
      const [{ resolve }, { databaseLocation, importSqliteDatabase }, { DatabaseNewerThanCodeError }, { configOrExit }, { cliLogger }] = await Promise.all([
        import("node:path"),
        import("../../store/open.js"),
        import("../../store/store.js"),
        import("../context.js"),
        import("../logger.js"),
      ]);
      const o = cli.output(cmd);
      const config = configOrExit(cli.io);
      if (!config.DATABASE_URL) {
        throw new CliError("DATABASE_URL is not set: set it to the PostgreSQL database to copy into (postgres://user:pass@host:5432/database)");
      }
      const source = resolve(cli.io.cwd, file);
      const target = databaseLocation(config);
      let outcome;
      try {
        outcome = await importSqliteDatabase(source, config, { logger: cliLogger(config, cli.io.stderr, "warn") });
      } catch (err) {
        if (err instanceof DatabaseNewerThanCodeError) throw new CliError(`${target}: ${err.message}; nothing was copied`);
        throw err;
      }
      if ("refused" in outcome) throw new CliError(outcome.refused);
      const { copied, requeued } = outcome;
      emit(o, { source, target, copied }, () =>
        [
          `copied ${source} into ${target}`,
          table(Object.entries(copied).map(([name, rows]) => ({ table: name, rows }))),
          ...(requeued ? [`${requeued} job(s) the old instance left running are queued again`] : []),
        ].join("\n"),
      );
    });
}
