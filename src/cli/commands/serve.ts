import type { Command } from "commander";
import type { CliContext } from "../io.js";
import { CliError, EXIT } from "../output.js";
import { untilSignal } from "../signals.js";

/**
 * Runs until the process's SIGTERM or SIGINT, re-reads its configuration on the process's SIGHUP,
 * and may end the process: a command for a process of its own (tests spawn it), whatever `io`.
 */
export function serveCommand(program: Command, { io }: CliContext): void {
  program
    .command("serve", { isDefault: false })
    .description("run the service: webhook intake, admin API, job runner and renewal sweep")
    .action(async () => {
      // Imported when the command runs (see buildProgram).
      const [{ describeConfig }, { configPaths }, { DatabaseNewerThanCodeError }, { startService }, { configOrExit }, { cliLogger }, { ListenError }, { reloadOnHangup }] =
        await Promise.all([
          import("../../config/describe.js"),
          import("../config-paths.js"),
          import("../../store/store.js"),
          import("../../compose/service.js"),
          import("../context.js"),
          import("../logger.js"),
          import("../../http/listen.js"),
          import("../reload.js"),
        ]);
      const config = configOrExit(io);
      // Handlers before the first line the service prints: a SIGTERM that came after a line a
      // supervisor or a test acts on ("listening") but before their installation would kill the
      // process with no graceful stop. One during start-up stops the service once it is up.
      const stopSignal = untilSignal();
      const logger = cliLogger(config, io.stderr);
      // SIGHUP's default would end the process with no line at all: it re-reads the configuration instead.
      const reloading = reloadOnHangup(logger, io.env);
      if (config.sandbox) {
        logger.warn(
          "SANDBOX MODE: no live setting is configured, so licences are bought from an in-process reseller sandbox " +
            `and customer mail is written to ${config.dataDir}/outbox/. Nothing here reaches a real reseller.`,
        );
        // Sandbox mode starts only when the operator set no secret (config: LIVE_KEYS), so these
        // are the ones generated for this data directory: printing them is the point.
        io.stderr.write(
          `\n  sandbox webhook secret:     ${config.WEBHOOK_SECRETS[0]}\n  sandbox admin token:        ${config.ADMIN_TOKEN[0]}\n` +
            `  sandbox provisioning token: ${config.PROVISIONING_TOKEN?.[0]}\n  (kept in ${config.dataDir}/sandbox-credentials.json)\n\n`,
        );
      }
      logger.info({ config: describeConfig(config) }, "configuration");
      logger.info({ base_dir: config.baseDir, paths: configPaths(config, io.env) }, "paths (relative settings resolve against base_dir, the working directory)");
      let service;
      try {
        service = await startService({ config, logger });
      } catch (err) {
        if (err instanceof DatabaseNewerThanCodeError) throw new CliError(err.message);
        if (err instanceof ListenError) throw new CliError(err.message);
        throw err;
      }
      logger.info({ url: service.url }, `license-bridge listening on ${service.url}`);
      if (service.config.CONSOLE === "on") {
        logger.info({ url: `${service.url}/console` }, `console: ${service.url}/console`);
        // Beside the sandbox's printed admin token, which is what logs in there.
        if (config.sandbox) io.stderr.write(`\n  console: ${service.url}/console (log in with the sandbox admin token)\n\n`);
      }
      reloading.attach(service);
      const signal = await stopSignal;
      reloading.detach();
      logger.info({ signal }, "shutting down: no new jobs are claimed; running ones may finish");
      const { unfinished } = await service.close();
      logger.info("stopped");
      // A call still in flight would hold the process until it times out, for nothing: its job
      // records nothing more and resumes on restart, when its lease is taken back.
      if (unfinished > 0) process.exit(EXIT.ok);
    });
}
