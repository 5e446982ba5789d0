import type { Command } from "commander";
import type { CliContext } from "../io.js";
import { emit } from "../output.js";

/**
 * `license-bridge secrets new`: fresh values of the shapes the settings take, for a first
 * set-up or a rotation (append the new one to ADMIN_TOKEN, PROVISIONING_TOKEN or WEBHOOK_SECRETS,
 * reload, move the clients over, drop the old one, reload). Printed, never stored.
 */
export function secretsCommands(program: Command, cli: CliContext): void {
  const secrets = program.command("secrets").description("generate secrets for the settings");
  secrets
    .command("new")
    .description("print a fresh value for each secret setting (env lines, or --json)")
    .option("--json", "machine-readable output")
    .action(async (_o, cmd: Command) => {
      const { randomBytes } = await import("node:crypto");
      const token = (prefix: string) => `${prefix}${randomBytes(32).toString("base64url")}`;
      const values = {
        WEBHOOK_SECRETS: `whsec_${randomBytes(32).toString("base64")}`,
        ADMIN_TOKEN: token("lba_"),
        PROVISIONING_TOKEN: token("lbp_"),
        HOSTBILL_WEBHOOK_SECRET: randomBytes(32).toString("base64url"),
        UPMIND_WEBHOOK_SECRET: randomBytes(32).toString("base64url"),
        BLESTA_WEBHOOK_TOKEN: randomBytes(32).toString("base64url"),
      };
      emit(cli.output(cmd), values, () =>
        [
          "# fresh values; to rotate, append one to its setting (comma-separated), reload (SIGHUP), move the clients, drop the old one, reload",
          ...Object.entries(values).map(([k, v]) => `${k}=${v}`),
        ].join("\n"),
      );
    });
}
