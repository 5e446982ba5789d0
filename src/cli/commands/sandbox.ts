import { Option, type Command } from "commander";
import type { Logger } from "../../log/logger.js";
import { PROVIDER_NAMES, type ProviderName } from "../../vocabulary/providers.js";
import type { CliContext } from "../io.js";
import { CliError } from "../output.js";
import { untilSignal } from "../signals.js";

/** Runs until the process's SIGTERM or SIGINT: a command for a process of its own, as serve is. */
export function sandboxCommand(program: Command, { io }: CliContext): void {
  program
    .command("sandbox")
    .description("run one licence provider's sandbox alone: the reseller API (default), cPanel Manage2 or CloudLinux CLN (HOST, SANDBOX_PORT, ... from the environment)")
    .addOption(new Option("--provider <name>", "whose sandbox").choices(PROVIDER_NAMES).default("reseller"))
    .addHelpText(
      "after",
      [
        "",
        "The reseller's takes SANDBOX_TOKEN, SANDBOX_ADMIN_TOKEN, SANDBOX_LEGACY_TOKEN and SANDBOX_BALANCE.",
        "Manage2's and CLN's sign in with their built-in credentials, printed at start (give them the",
        "bridge as MANAGE2_URL, MANAGE2_USER, MANAGE2_PASSWORD or CLN_URL, CLN_LOGIN, CLN_SECRET_KEY);",
        "SANDBOX_ADMIN_TOKEN is the token of their /_sandbox routes. Every one takes the faults",
        "(SANDBOX_LATENCY_MS, SANDBOX_ERROR_RATE, SANDBOX_DROP_RATE, SANDBOX_HOLD_MS, SANDBOX_HOLD_RATE)",
        "and SANDBOX_STATE_PATH.",
      ].join("\n"),
    )
    .action(async (opts: { provider: ProviderName }) => {
      // Imported when the command runs (see buildProgram).
      const [{ createLogger }, { startSandboxFromEnv }] = await Promise.all([import("../../log/logger.js"), import("../../sandbox/main.js")]);
      const logger = createLogger({ level: io.env.LOG_LEVEL || "info", destination: io.stdout, pretty: io.stdout.isTTY === true });
      let running;
      try {
        running = opts.provider === "reseller" ? await startSandboxFromEnv(io.env, logger) : await startProviderSandbox(opts.provider, io.env, logger);
      } catch (err) {
        throw new CliError((err as Error).message, 78);
      }
      await untilSignal();
      await running.close();
    });
}

/**
 * Manage2's or CLN's sandbox on HOST:SANDBOX_PORT, from the variables the reseller's sandbox
 * reads (the ones that apply to both): no variables of their own, so the built-in credentials,
 * which are public knowledge, are what the bridge is given.
 */
async function startProviderSandbox(provider: "manage2" | "cln", env: Record<string, string | undefined>, logger: Logger): Promise<{ close(): Promise<void> }> {
  const { sandboxEnvSchema } = await import("../../sandbox/main.js");
  const parsed = sandboxEnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new Error(`invalid sandbox environment: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  }
  const s = parsed.data;
  const common = {
    faults: { latencyMs: s.SANDBOX_LATENCY_MS, errorRate: s.SANDBOX_ERROR_RATE, dropAfterCommitRate: s.SANDBOX_DROP_RATE, holdMs: s.SANDBOX_HOLD_MS, holdRate: s.SANDBOX_HOLD_RATE },
    statePath: s.SANDBOX_STATE_PATH,
    logger,
  };
  // A chosen admin token stays out of the log, as the reseller sandbox keeps chosen tokens out.
  const adminToken = (builtIn: string) => s.SANDBOX_ADMIN_TOKEN ?? builtIn;
  const shownAdmin = (builtIn: string) => (s.SANDBOX_ADMIN_TOKEN === undefined ? builtIn : "(set by SANDBOX_ADMIN_TOKEN)");

  if (provider === "manage2") {
    const [{ createManage2Sandbox }, { DEFAULT_MANAGE2_SANDBOX_CREDENTIALS: creds, MANAGE2_SANDBOX_DEFAULT_GROUP_ID }, { DEFAULT_SANDBOX_TOKENS }] = await Promise.all([
      import("../../sandbox/manage2/app.js"),
      import("../../vocabulary/manage2-sandbox-identity.js"),
      import("../../vocabulary/sandbox-identity.js"),
    ]);
    const running = await createManage2Sandbox({ ...common, adminToken: adminToken(DEFAULT_SANDBOX_TOKENS.admin) }).listen(s.SANDBOX_PORT, s.HOST);
    logger.info(
      {
        url: running.url,
        credentials: { MANAGE2_URL: running.url, MANAGE2_USER: creds.user, MANAGE2_PASSWORD: creds.password },
        default_group_id: MANAGE2_SANDBOX_DEFAULT_GROUP_ID,
        admin_token: shownAdmin(DEFAULT_SANDBOX_TOKENS.admin),
        statePath: s.SANDBOX_STATE_PATH ?? null,
      },
      `cPanel Manage2 sandbox listening: ${running.url} (user ${creds.user}, password ${creds.password})`,
    );
    return running;
  }
  const [{ createClnSandbox }, { DEFAULT_CLN_SANDBOX_ACCOUNT: account, DEFAULT_CLN_SANDBOX_ADMIN_TOKEN }] = await Promise.all([
    import("../../sandbox/cln/app.js"),
    import("../../vocabulary/cln-sandbox-identity.js"),
  ]);
  const running = await createClnSandbox({ ...common, adminToken: adminToken(DEFAULT_CLN_SANDBOX_ADMIN_TOKEN) }).listen(s.SANDBOX_PORT, s.HOST);
  logger.info(
    {
      url: running.url,
      apiUrl: running.apiUrl,
      credentials: { CLN_URL: running.url, CLN_LOGIN: account.login, CLN_SECRET_KEY: account.secretKey },
      admin_token: shownAdmin(DEFAULT_CLN_SANDBOX_ADMIN_TOKEN),
      statePath: s.SANDBOX_STATE_PATH ?? null,
    },
    `CloudLinux CLN sandbox listening: ${running.url} (login ${account.login}, secret key ${account.secretKey})`,
  );
  return running;
}
