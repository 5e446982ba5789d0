import { existsSync } from "node:fs";
import { userInfo } from "node:os";
import type { Config } from "../config/load.js";
import type { AuditDraft, Store } from "../store/store.js";
import type { AuditOutcome } from "../vocabulary/audit.js";
import { ADMIN_TOKEN_ACTOR, ROLE_MEANING, roleAllows, type Actor, type Role } from "../vocabulary/roles.js";
import { withArticle } from "../vocabulary/text.js";
import type { CliIo } from "./io.js";
import { CliError, EXIT } from "./output.js";

/**
 * Who a CLI command acts as, for the audit trail (issue 26). Whoever runs the CLI holds the
 * configuration and the database, so by default it acts with an admin's rights under the name
 * `cli:<OS user>`. `--as <name>` names an operator of OPERATORS_FILE (or `admin`): the entries
 * carry that name, so `audit --actor alice` finds Alice's work from the API and the CLI alike,
 * and that operator's role applies, so a viewer cannot act by accident.
 */
export interface CliActor extends Actor {
  /** Said in every entry's detail: the CLI, and the OS user behind it. */
  via: string;
}

function osUser(env: NodeJS.ProcessEnv): string {
  try {
    return userInfo().username || "unknown";
  } catch {
    // No passwd entry for this uid (some containers): the environment's word, else unknown.
    return env.USER ?? env.LOGNAME ?? "unknown";
  }
}

export function cliActor(config: Config, as: string | undefined, env: NodeJS.ProcessEnv): CliActor {
  const user = osUser(env);
  const via = `via the CLI (OS user ${user})`;
  if (as === undefined) return { name: `cli:${user}`, role: "admin", via };
  if (as === ADMIN_TOKEN_ACTOR) return { name: ADMIN_TOKEN_ACTOR, role: "admin", via };
  const op = config.operators.find((o) => o.name === as);
  if (!op) throw new CliError(`--as ${JSON.stringify(as)}: no operator of that name in OPERATORS_FILE (nor "admin")`, EXIT.usage);
  return { name: op.name, role: op.role, via };
}

/** The draft a store operation takes, to write the entry in its own transaction. */
export function draftOf(actor: CliActor, action: string, detail?: string): AuditDraft {
  return { actor: actor.name, action, detail: detail ? `${detail}; ${actor.via}` : actor.via };
}

/**
 * Refuses, audited, an action `actor`'s role does not allow: exit code 1 with one line, and a
 * `refused` entry in the trail.
 */
export async function requireRole(
  store: Pick<Store, "audit" | "services">,
  actor: CliActor,
  need: Role,
  action: string,
  about: { service_id?: string | null; job_id?: number | null } = {},
): Promise<void> {
  if (roleAllows(actor.role, need)) return;
  const why = `forbidden: ${action} needs the ${need} role (${ROLE_MEANING[need]}); ${actor.name} is ${withArticle(actor.role)}`;
  // Only a service the bridge knows is named: an unknown id may be anything typed (a token pasted in the wrong place).
  const known = about.service_id ? (await store.services.get(about.service_id)) !== undefined : false;
  await store.audit.record({ ...draftOf(actor, action, why), ...about, service_id: known ? about.service_id! : null, outcome: "refused" });
  throw new CliError(why);
}

/**
 * The bridge's store when there is one to keep the trail in: a database at DATABASE_PATH (or
 * DATABASE_URL) at the code's migration. None for the CLI used on its own against a reseller
 * (no service ever ran here), where the reseller's operations still work.
 */
async function trailStore(config: Config, io: Pick<CliIo, "stderr">): Promise<Store | undefined> {
  if (!config.DATABASE_URL && (config.DATABASE_PATH === ":memory:" || !existsSync(config.DATABASE_PATH))) return undefined;
  const [{ openStore }, { systemClock }] = await Promise.all([import("../store/open.js"), import("../clock.js")]);
  const logger = config.DATABASE_URL ? (await import("./logger.js")).cliLogger(config, io.stderr, "warn") : undefined;
  const store = await openStore(config, { clock: systemClock, logger, migrate: false });
  const status = await store.migrationStatus();
  if (status.databaseVersion === status.codeVersion) return store;
  await store.close();
  return undefined;
}

/**
 * An action whose change is upstream (the reseller's money and accounts), not in the bridge's
 * state: the entry is written after it, ok or failed. Without the bridge's database (the CLI
 * used on its own against a reseller) there is no trail to write: it says so on stderr.
 */
export async function auditedUpstream<T>(
  config: Config,
  io: Pick<CliIo, "stderr">,
  actor: CliActor,
  need: Role,
  action: string,
  detail: string,
  run: () => Promise<T>,
): Promise<T> {
  const store = await trailStore(config, io);
  if (!store) {
    if (!roleAllows(actor.role, need)) throw new CliError(`forbidden: ${action} needs the ${need} role; ${actor.name} is ${withArticle(actor.role)}`);
    io.stderr.write("license-bridge: not audited: no bridge database here (at its current migration) to keep the audit trail in\n");
    return run();
  }
  try {
    await requireRole(store, actor, need, action);
    let outcome: AuditOutcome = "ok";
    let why = detail;
    try {
      return await run();
    } catch (err) {
      outcome = "failed";
      why = `${detail}; ${(err as Error).message}`;
      throw err;
    } finally {
      await store.audit.record({ ...draftOf(actor, action, why), outcome });
    }
  } finally {
    await store.close();
  }
}
