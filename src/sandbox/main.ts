import { z } from "zod";
import type { Logger } from "../log/logger.js";
import { createSandbox, type RunningSandbox, type Sandbox } from "./app.js";
import { DEFAULT_SANDBOX_TOKENS, type SandboxTokens } from "../vocabulary/sandbox-identity.js";

/** Unset and empty variables both mean "use the default", as a blank line in a .env file would. */
const unsetIfEmpty = (v: unknown): unknown => (v === "" ? undefined : v);
const optionalText = z.preprocess(unsetIfEmpty, z.string().optional());
const rate = z.preprocess(unsetIfEmpty, z.coerce.number().min(0).max(1).default(0));

/** The stand-alone sandbox's variables (read by the README's settings table for their defaults). */
export const sandboxEnvSchema = z.object({
  HOST: z.preprocess(unsetIfEmpty, z.string().default("127.0.0.1")),
  SANDBOX_PORT: z.preprocess(unsetIfEmpty, z.coerce.number().int().min(0).max(65535).default(8090)),
  SANDBOX_TOKEN: optionalText,
  SANDBOX_ADMIN_TOKEN: optionalText,
  SANDBOX_LEGACY_TOKEN: optionalText,
  SANDBOX_BALANCE: z.preprocess(unsetIfEmpty, z.coerce.number().finite().min(0).default(1000)),
  SANDBOX_LATENCY_MS: z.preprocess(unsetIfEmpty, z.coerce.number().int().min(0).default(0)),
  SANDBOX_ERROR_RATE: rate,
  SANDBOX_DROP_RATE: rate,
  SANDBOX_HOLD_MS: z.preprocess(unsetIfEmpty, z.coerce.number().int().min(0).max(600_000).default(0)),
  SANDBOX_HOLD_RATE: rate,
  SANDBOX_STATE_PATH: optionalText,
});

export interface StartedSandbox extends RunningSandbox {
  sandbox: Sandbox;
}

/** Starts the stand-alone sandbox server from environment variables; throws naming the bad variable. */
export async function startSandboxFromEnv(
  env: Record<string, string | undefined>,
  logger: Logger,
): Promise<StartedSandbox> {
  const parsed = sandboxEnvSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new Error(`invalid sandbox environment: ${problems}`);
  }
  const config = parsed.data;
  const tokens: SandboxTokens = {
    reseller: config.SANDBOX_TOKEN ?? DEFAULT_SANDBOX_TOKENS.reseller,
    admin: config.SANDBOX_ADMIN_TOKEN ?? DEFAULT_SANDBOX_TOKENS.admin,
    legacy: config.SANDBOX_LEGACY_TOKEN ?? DEFAULT_SANDBOX_TOKENS.legacy,
  };
  const sandbox = createSandbox({
    tokens,
    balance: config.SANDBOX_BALANCE,
    faults: {
      latencyMs: config.SANDBOX_LATENCY_MS,
      errorRate: config.SANDBOX_ERROR_RATE,
      dropAfterCommitRate: config.SANDBOX_DROP_RATE,
      holdMs: config.SANDBOX_HOLD_MS,
      holdRate: config.SANDBOX_HOLD_RATE,
    },
    statePath: config.SANDBOX_STATE_PATH,
    logger,
  });
  const running = await sandbox.listen(config.SANDBOX_PORT, config.HOST);
  logger.info(
    {
      url: running.url,
      apiUrl: running.apiUrl,
      legacyUrl: running.legacyUrl,
      // Built-in tokens are public knowledge and handy to copy; chosen ones stay out of the log.
      credentials: {
        reseller: shown(tokens.reseller, DEFAULT_SANDBOX_TOKENS.reseller, "SANDBOX_TOKEN"),
        admin: shown(tokens.admin, DEFAULT_SANDBOX_TOKENS.admin, "SANDBOX_ADMIN_TOKEN"),
        legacy: shown(tokens.legacy, DEFAULT_SANDBOX_TOKENS.legacy, "SANDBOX_LEGACY_TOKEN"),
      },
      statePath: config.SANDBOX_STATE_PATH ?? null,
    },
    `reseller API sandbox listening: v1 ${running.apiUrl}, v2 ${running.legacyUrl}`,
  );
  return { ...running, sandbox };
}

function shown(token: string, builtIn: string, variable: string): string {
  return token === builtIn ? token : `(set by ${variable})`;
}
