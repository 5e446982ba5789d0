import { Option, type Command } from "commander";
import { ROLES, type Role } from "../../vocabulary/roles.js";
import type { CliContext } from "../io.js";
import { CliError, EXIT, emit } from "../output.js";

/**
 * `license-bridge operators new|hash`: an operator's token and the entry of OPERATORS_FILE that
 * holds only its SHA-256. The token is printed once, for the operator; the file never has it.
 */
export function operatorsCommands(program: Command, cli: CliContext): void {
  const operators = program.command("operators").description("named operators of the admin API, the CLI and the console (OPERATORS_FILE)");

  operators
    .command("new <name>")
    .description("make a fresh token for an operator and print it with the OPERATORS_FILE entry that holds its hash")
    .addOption(new Option("--role <role>", "what the operator may do").choices(ROLES).makeOptionMandatory())
    .option("--json", 'machine-readable output: {"token", "entry"}')
    .action(async (name: string, opts: { role: Role }, cmd: Command) => {
      const [{ randomBytes, createHash }, { operatorSchema }] = await Promise.all([import("node:crypto"), import("../../config/operators.js")]);
      const token = `lbo_${randomBytes(32).toString("base64url")}`;
      const entry = operatorSchema.safeParse({ name, role: opts.role, token_sha256: createHash("sha256").update(token).digest("hex") });
      if (!entry.success) throw new CliError(`name ${entry.error.issues[0]?.message ?? "is not valid"}, got ${JSON.stringify(name)}`, EXIT.usage);
      emit(cli.output(cmd), { token, entry: entry.data }, () =>
        [
          `# the token of ${name}: give it to them, it is shown only now (the file keeps its hash)`,
          token,
          "# add this entry to the list in OPERATORS_FILE, then reload the service (SIGHUP)",
          JSON.stringify(entry.data),
        ].join("\n"),
      );
    });

  operators
    .command("hash")
    .description("read a token on standard input and print its SHA-256, the token_sha256 of an OPERATORS_FILE entry")
    .option("--json", 'machine-readable output: {"token_sha256"}')
    .action(async (_opts: unknown, cmd: Command) => {
      const { createHash } = await import("node:crypto");
      const chunks: Buffer[] = [];
      for await (const chunk of cli.io.stdin) chunks.push(Buffer.from(chunk));
      // One trailing newline is the shell's (echo, a file), not the token's.
      const token = Buffer.concat(chunks).toString("utf8").replace(/\r?\n$/, "");
      if (token.length < 16) throw new CliError("a token of 16 or more characters is expected on standard input", EXIT.usage);
      const token_sha256 = createHash("sha256").update(token).digest("hex");
      emit(cli.output(cmd), { token_sha256 }, () => token_sha256);
    });
}
