import type { Config } from "../config/load.js";
import { createResellerClients, NoResellerError, resellerEndpoints, type ResellerEndpoints } from "../compose/reseller-connection.js";
import { ResellerError } from "../reseller/errors.js";
import { createUpstream, type Upstream } from "../reseller/upstream.js";
import type { V1Client } from "../reseller/v1.js";
import type { CliContext } from "./io.js";
import { cliLogger } from "./logger.js";
import { CliError } from "./output.js";

/** The reseller the CLI talks to, found the way the service finds it (src/compose/reseller-connection.ts). */
function endpoints(config: Config, role: "reseller" | "admin"): ResellerEndpoints {
  try {
    return resellerEndpoints(config, role);
  } catch (err) {
    if (err instanceof NoResellerError) throw new CliError(err.message);
    throw err;
  }
}

/** Quiet unless LOG_LEVEL asks for more than info: the CLI's own output is what matters. */
const clientOptions = (config: Config, cli: Pick<CliContext, "io">) => ({
  timeoutMs: config.RESELLER_TIMEOUT_MS,
  logger: cliLogger(config, cli.io.stderr, config.LOG_LEVEL === "info" ? "warn" : config.LOG_LEVEL),
});

/** A v1 client with the reseller token, or the admin one for `reseller ...` commands; its connections close when the run ends. */
export function v1ClientFromConfig(config: Config, cli: Pick<CliContext, "io" | "atEnd">, role: "reseller" | "admin" = "reseller"): V1Client {
  // v2 left out: only v1 is wanted here, and each client keeps its own connection pool.
  const { v1 } = createResellerClients({ ...endpoints(config, role), v2: null }, clientOptions(config, cli));
  cli.atEnd(() => v1.close());
  return v1;
}

/** The lifecycle's Upstream, with the protocol (RESELLER_PROTOCOL) the service uses; its connections close when the run ends. */
export function upstreamFromConfig(config: Config, cli: Pick<CliContext, "io" | "atEnd">): Upstream {
  const { v1, v2 } = createResellerClients(endpoints(config, "reseller"), clientOptions(config, cli));
  cli.atEnd(() => v1.close());
  if (v2) cli.atEnd(() => v2.close());
  if (config.RESELLER_PROTOCOL === "v2" && !v2) throw new CliError("RESELLER_PROTOCOL=v2 needs RESELLER_LEGACY_URL and RESELLER_LEGACY_TOKEN");
  return createUpstream(config.RESELLER_PROTOCOL, v1, v2);
}

/** Runs a reseller call; its error becomes one line for the operator (exit code 1). */
export async function upstreamCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ResellerError) {
      const fields = "errors" in err && err.errors ? ` ${JSON.stringify(err.errors)}` : "";
      throw new CliError(`${err.message}${err.upstreamMessage ? `: ${err.upstreamMessage}` : ""}${fields}`);
    }
    throw err;
  }
}
