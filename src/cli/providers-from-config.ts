import { z } from "zod";
import type { Config } from "../config/load.js";
import { sandboxPointerOf } from "../compose/provider-connections.js";
import { providerRegistry } from "../compose/provider-registry.js";
import { readSandboxPointer } from "../compose/sandbox-pointer.js";
import { createClnClient } from "../providers/cln/index.js";
import { createManage2Client } from "../providers/manage2/index.js";
import { LicenceListError, type ListSources } from "../reconcile/lists.js";
import { PROVIDER_TITLES } from "../vocabulary/providers.js";
import type { CliContext } from "./io.js";
import { cliLogger } from "./logger.js";
import { CliError } from "./output.js";
import { upstreamCall, upstreamFromConfig } from "./upstream-from-config.js";

/**
 * Every licence list the service reads, found the way the service finds it, for the commands
 * that compare the book with them (reconcile, adopt): the reseller's (none when the
 * configuration has no reseller), and Manage2's and CLN's where the catalogue buys from them,
 * live at their URLs or, in sandbox mode, the running service's in-process sandboxes (whose
 * addresses it leaves in `<dataDir>/sandbox-<provider>.json`). Connections close when the run ends.
 */
export function listSourcesFromConfig(config: Config, cli: Pick<CliContext, "io" | "atEnd">): Required<ListSources> {
  const upstream = config.upstream.mode === "none" ? null : upstreamFromConfig(config, cli);
  const common = { timeoutMs: config.RESELLER_TIMEOUT_MS, logger: cliLogger(config, cli.io.stderr, config.LOG_LEVEL === "info" ? "warn" : config.LOG_LEVEL) };
  const m2 = config.providers.manage2;
  const cln = config.providers.cln;
  const manage2 = m2 ? createManage2Client({ baseUrl: m2.mode === "live" ? m2.url : runningSandbox(config, "manage2"), user: m2.user, password: m2.password, ...common }) : null;
  const clnClient = cln ? createClnClient({ baseUrl: cln.mode === "live" ? cln.url : runningSandbox(config, "cln"), login: cln.login, secretKey: cln.secretKey, ...common }) : null;
  for (const client of [manage2, clnClient]) if (client) cli.atEnd(() => client.close());
  // The reseller's list is read through `upstream` (compact); the registry serves Manage2's and CLN's.
  return { upstream, providers: providerRegistry(config, { upstream: null, manage2, cln: clnClient }, () => config.catalog) };
}

const pointerSchema = z.object({ url: z.string() });

/** Where the running sandbox-mode service's sandbox of `provider` listens, or one line saying there is none. */
function runningSandbox(config: Config, provider: "manage2" | "cln"): string {
  const pointer = sandboxPointerOf(config, provider);
  const found = readSandboxPointer(pointer, pointerSchema);
  if (found === "missing") throw new CliError(`sandbox mode and no running service with ${PROVIDER_TITLES[provider]}'s sandbox: start it (npm start) with a catalogue that buys from it`);
  if (found === "invalid") throw new CliError(`${pointer} is not what the service writes; restart the service`);
  return found.url;
}

/** Runs a command that reads the lists; a list that cannot be read becomes one line naming its provider (exit code 1). */
export async function listsCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await upstreamCall(fn);
  } catch (err) {
    if (err instanceof LicenceListError) throw new CliError(err.message);
    throw err;
  }
}
