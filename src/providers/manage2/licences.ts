import { ForbiddenError, ResellerError } from "../../reseller/errors.js";
import type { ProviderCapabilities } from "../port.js";
import { sameIp } from "../../vocabulary/ip-address.js";
import type { Manage2License } from "./answers.js";
import type { LicenseExpireAnswer, Manage2Client } from "./client.js";
import { carriesIntent, intentNote } from "./intent.js";
import type { ExpireCode } from "./inputs.js";

/**
 * Manage2 in the words of the provider port that is coming (issue 36): what it can do, and
 * acquire / find / list / suspend / unsuspend / terminate / changeIp / changeProduct, each one
 * Manage2 call (two for a list) and, where a call is refused, one look at the licence to tell
 * "already so" (a repeat after a lost answer) from a real refusal. The charging rule, the
 * intent record and "look before you buy again" stay with the caller (`callOnce`); this gives
 * it the look: `findByIntent`.
 *
 * Sources (notes/providers-research.md, part A): billing monthly while active, a snapshot on the
 * 15th, no renew or suspend call (support.cpanel.net "Partner Monthly Invoice", docs.cpanel.net
 * /tags/m2api); a reactivation fee for a licence expired before an invoice and reactivated
 * after it ("Manage2 Reactivation Fees"); XMLtransfer moves a licence in one call; expired
 * licences are listed only with `expired=1` (Upmind's CPanel provider, commit 2fa2043).
 */

/** What Manage2 can do, in the provider port's flags. */
export const MANAGE2_CAPABILITIES = {
  /** Billed monthly while active: a renewal buys nothing upstream. */
  renewal: "billed-while-active",
  /** No suspend call: suspending expires the licence; unsuspending reactivates the same one. */
  suspension: "by-expiry",
  /** The reactivation fee, for a licence expired before an invoice's snapshot and reactivated after it. */
  unsuspendBills: true,
  /** XMLtransfer moves the licence, id and all, in one call: never a moment without one. */
  changeIp: "atomic",
  /** XMLpackageUpdate: documented as working; a partner account may be refused (then the operator acts). */
  changeProduct: "package-update",
  /** The list shows each licence's status (active, expired, suspended), and no term expiry. */
  list: { status: true, expiry: false },
  bundles: false,
  /** An add sent again adds a second licence: after a lost answer, `findByIntent` looks first. */
  acquireIsIdempotent: false,
} as const satisfies ProviderCapabilities;

/** What a Manage2 product is bought as. */
export interface Manage2Sku {
  packageid: number;
  /** (Default: the licences' default group, else the account's default group) */
  groupid?: number;
}

/** A change asked again after a lost answer finds it done: `already` says so, and nothing was changed by this call. */
export interface Outcome {
  already: boolean;
  reason?: string;
}

export interface Manage2Licences {
  readonly capabilities: typeof MANAGE2_CAPABILITIES;
  /** XMLlicenseAdd carrying `intent` in `external_notes`; never reactivates an expired licence (that is `unsuspend`, by its id). */
  acquire(input: { ip: string; sku: Manage2Sku; intent: string }): Promise<{ licenseid: number; price?: number; monthly_price?: number }>;
  /** The licence of this id, active or (with `includeExpired`, the default) expired or suspended. */
  find(licenseid: number, options?: { includeExpired?: boolean }): Promise<Manage2License | undefined>;
  /** The licences of this package on this IP: the active ones, and (with `includeExpired`) the expired and suspended ones. */
  findAt(input: { ip: string; packageid: number; includeExpired?: boolean }): Promise<Manage2License[]>;
  /**
   * After a lost XMLlicenseAdd answer: the licence on (ip, package) that carries `intent` (an
   * active one first), and the others there. `ours` means the add happened: do not buy again.
   */
  findByIntent(input: { ip: string; packageid: number; intent: string }): Promise<{ ours?: Manage2License; others: Manage2License[] }>;
  /** Every licence of the account: the active ones, and (with `includeExpired`, the default) the rest. */
  list(options?: { includeExpired?: boolean }): Promise<Manage2License[]>;
  /** XMLlicenseExpire: the licence stops being billed. */
  suspend(licenseid: number, reason?: string): Promise<Outcome>;
  /** XMLlicenseReActivate (`dryrun=0`) of the same licence; `price` is what Manage2 says it billed. */
  unsuspend(licenseid: number): Promise<Outcome & { price?: number }>;
  /** XMLlicenseExpire, for good. */
  terminate(licenseid: number, reason?: string, expcode?: ExpireCode): Promise<Outcome>;
  /** XMLtransfer of this package's licence only. */
  changeIp(input: { ip: string; newip: string; packageid: number }): Promise<Outcome>;
  /** XMLpackageUpdate; a refusal is a ResellerError carrying Manage2's reason. */
  changeProduct(input: { ip: string; from: number; to: number }): Promise<Outcome>;
}

export interface Manage2LicencesOptions {
  /** Where `acquire` adds when the SKU names no group (MANAGE2_GROUP_ID). (Default: the account's default group) */
  groupid?: number;
  /** Why a suspension expires a licence, as Manage2 keeps it. (Default: "Suspended by license-bridge") */
  suspendReason?: string;
  /** (Default: "Terminated by license-bridge") */
  terminateReason?: string;
}

const isActive = (l: Manage2License): boolean => l.status === "active";

export function createManage2Licences(client: Manage2Client, options: Manage2LicencesOptions = {}): Manage2Licences {
  async function find(licenseid: number, findOptions: { includeExpired?: boolean } = {}): Promise<Manage2License | undefined> {
    const active = (await client.licenseInfo({ liscid: licenseid })).find((l) => l.licenseid === licenseid);
    if (active || findOptions.includeExpired === false) return active;
    // `liscid` alone answers active licences only; an expired one needs `expired=1`.
    return (await client.licenseInfo({ liscid: licenseid, expired: true })).find((l) => l.licenseid === licenseid);
  }

  async function findAt(input: { ip: string; packageid: number; includeExpired?: boolean }): Promise<Manage2License[]> {
    const here = (l: Manage2License): boolean => l.packageid === input.packageid && sameIp(l.ip, input.ip);
    const active = (await client.rawLookup({ ip: input.ip, all: true })).filter(here);
    if (!input.includeExpired) return active;
    const expired = (await client.licenseInfo({ expired: true, packageid: input.packageid })).filter(here);
    return mergeById(active, expired);
  }

  /**
   * Runs a change; when Manage2 refuses it (an answer, not a lost one), looks whether the
   * licence is already as asked, which is what a repeat after a lost answer meets.
   */
  async function change<T extends Outcome>(run: () => Promise<T>, alreadySo: () => Promise<boolean>): Promise<T | Outcome> {
    try {
      return await run();
    } catch (error) {
      if (!(error instanceof ResellerError) || !refusedByAnswer(error)) throw error;
      if (await alreadySo()) return { already: true, ...(error.upstreamMessage ? { reason: error.upstreamMessage } : {}) };
      throw error;
    }
  }

  async function expire(licenseid: number, reason: string, expcode: ExpireCode = "normal"): Promise<Outcome> {
    const outcome: Outcome & { answer?: LicenseExpireAnswer } = await change(
      async () => {
        const answer = await client.licenseExpire({ liscid: licenseid, reason, expcode });
        return { already: false, reason: answer.reason, answer };
      },
      async () => {
        const license = await find(licenseid);
        return license !== undefined && !isActive(license);
      },
    );
    const { answer, ...said } = outcome;
    // `result` "OK" is the licence expired, "" that it did not, at `status` 1 all the same (the
    // Expire page); the legacy layout puts its words in `result`. Anything but "OK" is read back:
    // a licence still active is still billed, so the expiry is not done. Manage2 said plainly it
    // did not expire it: asking again would burn the job's attempts on the same answer, so the
    // job waits for a person (a forbidden call's disposition), with Manage2's words.
    if (answer !== undefined && answer.result !== "OK" && (await find(licenseid, { includeExpired: false }))?.status === "active") {
      const words = answer.reason?.trim();
      throw new ForbiddenError({
        operation: "manage2.XMLlicenseExpire",
        status: 200,
        raw: answer.raw,
        ...(words ? { upstreamMessage: words } : {}),
        message:
          `manage2.XMLlicenseExpire: Manage2 answered status 1${words ? ` ("${words}")` : ""} with result "${answer.result ?? ""}": licence ${licenseid} did not expire; it is still active and billed. ` +
          "Expire it in Manage2 or ask cPanel why not, then retry the job",
        mayHaveTakenEffect: false,
      });
    }
    return said;
  }

  return {
    capabilities: MANAGE2_CAPABILITIES,

    async acquire({ ip, sku, intent }) {
      const groupid = sku.groupid ?? options.groupid;
      const added = await client.licenseAdd({
        ip,
        packageid: sku.packageid,
        ...(groupid === undefined ? {} : { groupid }),
        force: false,
        reactivateok: false,
        external_notes: intentNote(intent),
      });
      return withPrices({ licenseid: added.licenseid }, added);
    },

    find,
    findAt,

    async findByIntent({ ip, packageid, intent }) {
      const there = await findAt({ ip, packageid, includeExpired: true });
      const ours = there.filter((l) => carriesIntent(l.external_notes, intent)).sort((a, b) => Number(isActive(b)) - Number(isActive(a)))[0];
      return { ...(ours ? { ours } : {}), others: there.filter((l) => l !== ours) };
    },

    async list(listOptions = {}) {
      const active = await client.licenseInfo({ expired: false });
      if (listOptions.includeExpired === false) return active;
      return mergeById(active, await client.licenseInfo({ expired: true }));
    },

    suspend: (licenseid, reason) => expire(licenseid, reason ?? options.suspendReason ?? "Suspended by license-bridge"),
    terminate: (licenseid, reason, expcode) => expire(licenseid, reason ?? options.terminateReason ?? "Terminated by license-bridge", expcode),

    unsuspend: (licenseid) =>
      change(
        async () => {
          const a = await client.licenseReActivate({ liscid: licenseid, dryrun: false });
          return { already: false, reason: a.reason, ...(a.price === undefined ? {} : { price: a.price }) };
        },
        async () => (await find(licenseid, { includeExpired: false }))?.status === "active",
      ),

    changeIp: ({ ip, newip, packageid }) =>
      change(
        async () => ({ already: false, reason: (await client.transfer({ oldip: ip, newip, packageid })).reason }),
        async () => (await findAt({ ip: newip, packageid })).length > 0 && (await findAt({ ip, packageid })).length === 0,
      ),

    changeProduct: ({ ip, from, to }) =>
      change(
        async () => ({ already: false, reason: (await client.packageUpdate({ ip, oldpackageid: from, newpackageid: to })).reason }),
        async () => (await findAt({ ip, packageid: to })).length > 0 && (await findAt({ ip, packageid: from })).length === 0,
      ),
  };
}

/**
 * Manage2 answered and said no (a refusal, not a lost or unreadable answer, not our own input
 * check, not bad credentials): the one case where a look can show the change was already made.
 */
function refusedByAnswer(error: ResellerError): boolean {
  if (error.status !== 200 || error.mayHaveTakenEffect) return false;
  return error.kind === "already_exists" || error.kind === "not_found" || error.kind === "validation" || error.kind === "unexpected";
}

/** Both reads of a list, one record per licence: a licence read twice (it changed between the calls) as the later read has it. */
function mergeById(first: Manage2License[], later: Manage2License[]): Manage2License[] {
  const byId = new Map<number, Manage2License>();
  for (const l of [...first, ...later]) byId.set(l.licenseid, l);
  return [...byId.values()];
}

function withPrices<T extends object>(target: T, from: { price?: number; monthly_price?: number }): T & { price?: number; monthly_price?: number } {
  return {
    ...target,
    ...(from.price === undefined ? {} : { price: from.price }),
    ...(from.monthly_price === undefined ? {} : { monthly_price: from.monthly_price }),
  };
}
