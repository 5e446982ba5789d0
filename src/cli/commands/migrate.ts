import type { Command } from "commander";
import { CliError, emit, type Output } from "../output.js";

export function migrateCommand(program: Command, output: (cmd: Command) => Output): void {
  program
    .command("migrate")
    .description("apply pending database migrations (each in its own transaction)")
    .option("--status", "only show the database and code versions")
    .option("--json", "machine-readable output")
    .action(async (opts: { status?: boolean }, cmd: Command) => {
      // Imported when the command runs (see buildProgram).
      const [{ openDatabase }, { DatabaseNewerThanCodeError, migrate, migrationStatus }, { configOrExit }] = await Promise.all([
        import("../../store/database.js"),
        import("../../store/migrations.js"),
        import("../context.js"),
      ]);
      const o = output(cmd);
      const config = configOrExit();
      const db = openDatabase(config.DATABASE_PATH);
      try {
        if (opts.status) {
          const s = migrationStatus(db);
          const data = { database: config.DATABASE_PATH, database_version: s.databaseVersion, code_version: s.codeVersion, pending: s.pending.map((m) => m.id) };
          if (s.databaseVersion > s.codeVersion) throw new DatabaseNewerThanCodeError(s.databaseVersion, s.codeVersion);
          return emit(o, data, () => `database ${config.DATABASE_PATH}: version ${s.databaseVersion}, code ${s.codeVersion}, ${s.pending.length} pending`);
        }
        const applied = migrate(db);
        const data = { database: config.DATABASE_PATH, applied: applied.map((m) => ({ id: m.id, name: m.name })) };
        emit(o, data, () =>
          applied.length ? applied.map((m) => `applied ${String(m.id).padStart(3, "0")}_${m.name}`).join("\n") : "database is up to date",
        );
      } catch (err) {
        if (err instanceof DatabaseNewerThanCodeError) throw new CliError(err.message);
        throw err;
      } finally {
        db.close();
      }
    });
}
