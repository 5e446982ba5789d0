import type { Catalog } from "../catalog/catalog.js";
import type { LicenseInstallCommand } from "../lifecycle/install-commands.js";
import type { Logger } from "../log/logger.js";
import type { ServiceRow } from "../store/store.js";
import type { ErrorCode } from "../vocabulary/error-codes.js";
import type { FieldErrors } from "../intake/event-schema.js";

/** What the HTTP layer sends back: a status and a JSON body. */
export interface Answer {
  status: number;
  body: Record<string, unknown>;
  /** Sent as Retry-After (a pending call answered as an error). */
  retryAfterSeconds?: number;
}

/** A 200's body: the licence as a panel's client area shows it. */
export interface ProvisionedLicense {
  success: true;
  /** The bridge's stable name of the licence, returned by create and accepted by every other call. */
  license_key: string;
  service_identifier: string;
  package_identifier: string;
  /** Who sells the licence (service-contract.md section 12): the reseller, Manage2 or CLN. */
  provider: ServiceRow["provider"];
  status: ServiceRow["status"];
  ip: string;
  type: string | null;
  variant: string | null;
  bundle: string | null;
  expires_at: string | null;
  paid_until: string | null;
  install_command: string | null;
  ip_changes_left: number | null;
  last_error: string | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export const refusal = (status: number, code: ErrorCode, error: string, extra: Record<string, unknown> = {}): Answer => ({
  status,
  body: { success: false, error, code, ...extra },
});
export const invalid = (errors: FieldErrors, code: ErrorCode = "validation") => refusal(422, code, "Validation error", { errors });
export const unknownService = () => refusal(404, "unknown_service", "unknown service");

/**
 * The 200 of every call: the licence, with its install command once it is active (one line per
 * licence of a bundle; null when its provider cannot say now: the page still shows the rest).
 */
export function licenseAnswerer(deps: { catalog: Catalog; installCommands(svc: ServiceRow): Promise<LicenseInstallCommand[]>; logger: Logger }) {
  const installCommand = async (svc: ServiceRow): Promise<string | null> => {
    try {
      return (await deps.installCommands(svc)).map((c) => c.command).join("\n") || null;
    } catch (err) {
      deps.logger.warn({ err, service_id: svc.service_id, provider: svc.provider }, "provisioning: no install command from the licence's provider");
      return null;
    }
  };
  return async (svc: ServiceRow): Promise<Answer> => {
    const limit = deps.catalog.product(svc.product_id)?.maxIpChanges ?? null;
    const body: ProvisionedLicense = {
      success: true,
      license_key: svc.license_key,
      service_identifier: svc.service_id,
      package_identifier: svc.product_id,
      provider: svc.provider,
      status: svc.status,
      ip: svc.ip,
      type: svc.type,
      variant: svc.variant,
      bundle: svc.bundle,
      expires_at: iso(svc.expires_at),
      paid_until: iso(svc.paid_until),
      install_command: svc.status === "active" ? await installCommand(svc) : null,
      ip_changes_left: limit === null ? null : Math.max(0, limit - svc.ip_changes),
      last_error: svc.last_error,
    };
    return { status: 200, body: { ...body } };
  };
}

/** What a call still at work after PROVISION_WAIT_SECONDS suggests, answered as an error (on_pending=error). */
const PENDING_RETRY_AFTER_SECONDS = 30;

/**
 * A 202 pending as `503` with Retry-After and code `pending` (on_pending=error): not a 2xx, so a
 * caller that reads any 2xx carrying a license_key as done (Upmind's Generic provider) records a
 * failure and runs the call again, instead of a licence that may still be refused.
 */
export function pendingAsError(answer: Answer, serviceId: string | undefined): Answer {
  const { message, ...pending } = answer.body;
  return {
    status: 503,
    retryAfterSeconds: PENDING_RETRY_AFTER_SECONDS,
    body: { ...pending, ...(serviceId ? { service_identifier: serviceId } : {}), code: "pending", error: message },
  };
}
