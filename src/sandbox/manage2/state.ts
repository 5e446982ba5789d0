import { z } from "zod";
import { canonicalIp } from "../../vocabulary/ip-address.js";
import { loadStateFile, saveStateFile } from "../state-file.js";

/**
 * The Manage2 sandbox's account: packages, groups, licences with ids and statuses (1 active,
 * 2 expired, 4 suspended), the ledger of what was billed and the timeline of holdings. It never
 * speaks HTTP: refusals are reason texts the routes answer with `status` 0.
 *
 * Rules, and where they rest (notes/providers-research.md, part A):
 * - Billing is monthly while active; an add is billed its package's monthly price
 *   (docs.cpanel.net/manage2/api/manage2-api-add-licenses/ answers `price`, `monthly_price`).
 * - A reactivation fee, the licence's price, when it expired before an invoice (the 15th,
 *   a snapshot) and is reactivated after it (support.cpanel.net "Manage2 Reactivation Fees");
 *   `reactivationFee` can make it always or never, for tests.
 * - One active licence per (IP, package): not stated by any source (research item 13). What a
 *   second add answers is not public either: refused by default, or `duplicateAdd: "existing"`
 *   answers the licence already there (the Add License page says adding on a licensed IP
 *   "renews" it). An expired one is reactivated by an add only with `reactivateok`.
 * - XMLtransfer moves the licence, id and all (implied by its reason text), in one step; without
 *   a package every licence on the IP moves (the transfer page).
 * - XMLpackageUpdate works as its page documents, or is refused (`packageUpdate: "refuse"`)
 *   with the support article's words (KB 39376088188823) to exercise "blocked for the operator".
 * - XMLlicenseInfo shows expired and suspended licences only with `expired=1`, `liscid` included
 *   (Upmind's provider retries so, commit 2fa2043).
 * Reason texts of successes are the docs' examples; of refusals, but "Empty license.", the
 * sandbox's own (no other is public).
 */

export type StatusCode = 1 | 2 | 4;

export interface Manage2SandboxPackage {
  id: number;
  name: string;
  monthly_price: number;
  /** The product bit of XMLlicenseInfo (1 cPanel & WHM, 16 CloudLinux, 32 KernelCare, 256 Imunify360, …). (Default: 1) */
  producttype?: number;
}

export interface Manage2SandboxGroup {
  id: number;
  name: string;
}

export interface Manage2SandboxLicense {
  licenseid: number;
  ip: string;
  packageid: number;
  groupid: number;
  status: StatusCode;
  /** Unix seconds. */
  adddate: number;
  expiredon: number | null;
  expirereason: string | null;
  external_notes: string | null;
}

/** One billable call: an add, or a reactivation (its fee, 0 when none applied). */
export interface Manage2Charge {
  seq: number;
  at: string;
  op: "add" | "reactivate";
  licenseid: number;
  ip: string;
  packageid: number;
  groupid: number;
  amount: number;
}

export type TimelineEventKind = "added" | "expired" | "reactivated" | "transferred" | "package-changed" | "suspended";

/** When a licence came, went or moved. A transfer is one event: at no point is the licence on neither IP. */
export interface Manage2TimelineEvent {
  seq: number;
  at: string;
  event: TimelineEventKind;
  licenseid: number;
  /** Where the licence is after the event. */
  ip: string;
  packageid: number;
  /** Before a transfer. */
  from_ip?: string;
  /** Before a package change. */
  from_packageid?: number;
}

export interface StateRules {
  duplicateAdd: "refuse" | "existing";
  packageUpdate: "allow" | "refuse";
  reactivationFee: "after-invoice" | "always" | "never";
}

export type Refusal = { ok: false; reason: string };
export type Done<T> = { ok: true; value: T };
export type Result<T> = Done<T> | Refusal;

const refuse = (reason: string): Refusal => ({ ok: false, reason });
const done = <T>(value: T): Done<T> => ({ ok: true, value });

export const EMPTY_LICENSE = "Empty license.";
export const PACKAGE_UPDATE_REFUSED =
  "A Partner does not have the ability to upgrade or downgrade a license directly in their Manage2 account. Expire the current license and then add the new license tier.";

/** What an add, a reactivation or a dry run of either answers with. */
export interface Priced {
  license: Manage2SandboxLicense;
  kind: "added" | "reactivated" | "existing";
  /** Billed by this call. */
  price: number;
  monthly_price: number;
}

const licenseSchema = z.object({
  licenseid: z.number().int(),
  ip: z.string(),
  packageid: z.number().int(),
  groupid: z.number().int(),
  status: z.union([z.literal(1), z.literal(2), z.literal(4)]),
  adddate: z.number(),
  expiredon: z.number().nullable(),
  expirereason: z.string().nullable(),
  external_notes: z.string().nullable(),
});
const snapshotSchema = z.object({
  version: z.literal(1),
  licenses: z.array(licenseSchema),
  charges: z.array(
    z.object({
      seq: z.number().int(),
      at: z.string(),
      op: z.enum(["add", "reactivate"]),
      licenseid: z.number().int(),
      ip: z.string(),
      packageid: z.number().int(),
      groupid: z.number().int(),
      amount: z.number(),
    }),
  ),
  timeline: z.array(
    z.object({
      seq: z.number().int(),
      at: z.string(),
      event: z.enum(["added", "expired", "reactivated", "transferred", "package-changed", "suspended"]),
      licenseid: z.number().int(),
      ip: z.string(),
      packageid: z.number().int(),
      from_ip: z.string().optional(),
      from_packageid: z.number().int().optional(),
    }),
  ),
  next_license_id: z.number().int(),
});
type Snapshot = z.infer<typeof snapshotSchema>;

export interface Manage2StateOptions {
  packages: Manage2SandboxPackage[];
  groups: Manage2SandboxGroup[];
  defaultGroupId: number;
  firstLicenseId: number;
  now: () => Date;
  rules: () => StateRules;
  /** JSON file the account survives restarts in; loaded if present, rewritten after every change. */
  statePath?: string;
}

export class Manage2State {
  private data: Snapshot;

  constructor(private readonly options: Manage2StateOptions) {
    if (!options.groups.some((g) => g.id === options.defaultGroupId)) throw new Error(`manage2 sandbox: default group ${options.defaultGroupId} is not one of its groups`);
    this.data = loadStateFile(options.statePath, snapshotSchema, "manage2 sandbox", "a Manage2 sandbox state") ?? this.fresh();
  }

  reset(): void {
    this.data = this.fresh();
    this.persist();
  }

  packages(): Manage2SandboxPackage[] {
    return this.options.packages.map((p) => ({ ...p }));
  }

  groups(): Manage2SandboxGroup[] {
    return this.options.groups.map((g) => ({ ...g }));
  }

  package(id: number): Manage2SandboxPackage | undefined {
    return this.options.packages.find((p) => p.id === id);
  }

  group(id: number): Manage2SandboxGroup | undefined {
    return this.options.groups.find((g) => g.id === id);
  }

  licenses(): Manage2SandboxLicense[] {
    return this.data.licenses.map((l) => ({ ...l }));
  }

  ledger(): Manage2Charge[] {
    return this.data.charges.map((c) => ({ ...c }));
  }

  timeline(): Manage2TimelineEvent[] {
    return this.data.timeline.map((e) => ({ ...e }));
  }

  // ---- changes ----------------------------------------------------------------------------

  add(input: { ip: string; packageid: number; groupid?: number; reactivateok: boolean; dryrun: boolean; external_notes?: string }): Result<Priced> {
    const pkg = this.package(input.packageid);
    if (!pkg) return refuse("Invalid package id.");
    const groupid = input.groupid ?? this.options.defaultGroupId;
    if (!this.group(groupid)) return refuse("Invalid group id.");
    const existing = this.at(input.ip, pkg.id);
    const active = existing.find((l) => l.status === 1);
    if (active) {
      if (this.options.rules().duplicateAdd === "refuse") return refuse(`${input.ip} already has an active ${pkg.name} license (${active.licenseid}).`);
      return done({ license: { ...active }, kind: "existing", price: 0, monthly_price: pkg.monthly_price });
    }
    const suspended = existing.find((l) => l.status === 4);
    if (suspended) return refuse(`The ${pkg.name} license ${suspended.licenseid} on ${input.ip} is suspended by cPanel; it is not allowed to add another.`);
    const expired = existing.find((l) => l.status === 2);
    if (expired) {
      if (!input.reactivateok) {
        return refuse(`${input.ip} has an expired ${pkg.name} license (${expired.licenseid}); it is not allowed to add another: reactivate it, or pass reactivateok=1.`);
      }
      return this.reactivateLicense(expired, input.dryrun, input.external_notes);
    }
    if (input.dryrun) return done({ license: this.newLicense(input.ip, pkg.id, groupid, input.external_notes, 0), kind: "added", price: pkg.monthly_price, monthly_price: pkg.monthly_price });

    const license = this.newLicense(input.ip, pkg.id, groupid, input.external_notes, this.data.next_license_id++);
    this.data.licenses.push(license);
    this.charge("add", license, pkg.monthly_price);
    this.event("added", license);
    this.persist();
    return done({ license: { ...license }, kind: "added", price: pkg.monthly_price, monthly_price: pkg.monthly_price });
  }

  expire(liscid: number, reason: string): Result<Manage2SandboxLicense> {
    const license = this.byId(liscid);
    if (!license) return refuse(EMPTY_LICENSE);
    // A licence cPanel suspended (4) is not expired: the Expire page names no status it refuses
    // but an expired one, so it expires it, and lifting cPanel's suspension then leaves it expired.
    if (license.status === 2) return refuse(`License ${liscid} is already expired.`);
    license.status = 2;
    license.expiredon = this.unixNow();
    license.expirereason = reason;
    this.event("expired", license);
    this.persist();
    return done({ ...license });
  }

  reactivate(liscid: number, dryrun: boolean): Result<Priced> {
    const license = this.byId(liscid);
    if (!license) return refuse(EMPTY_LICENSE);
    if (license.status === 1) return refuse(`License ${liscid} is already active.`);
    if (license.status === 4) return refuse(`License ${liscid} is suspended by cPanel and cannot be reactivated; contact cPanel.`);
    return this.reactivateLicense(license, dryrun);
  }

  /**
   * Moves the active licences of `packageid` (every one without it) from `oldip` to `newip`,
   * each in one timeline event.
   */
  transfer(input: { oldip: string; newip: string; packageid?: number; dryrun: boolean }): Result<Manage2SandboxLicense[]> {
    if (input.packageid !== undefined && !this.package(input.packageid)) return refuse("Invalid package id.");
    const moving = this.data.licenses.filter((l) => l.status === 1 && l.ip === input.oldip && (input.packageid === undefined || l.packageid === input.packageid));
    if (moving.length === 0) return refuse(`No active license found on ${input.oldip}.`);
    for (const l of moving) {
      const taken = this.at(input.newip, l.packageid).find((t) => t.status === 1);
      if (taken) return refuse(`${input.newip} already has an active ${this.package(l.packageid)?.name ?? l.packageid} license (${taken.licenseid}).`);
    }
    if (input.dryrun) return done(moving.map((l) => ({ ...l })));
    for (const l of moving) {
      l.ip = input.newip;
      this.event("transferred", l, { from_ip: input.oldip });
    }
    this.persist();
    return done(moving.map((l) => ({ ...l })));
  }

  packageUpdate(input: { ip: string; newpackageid: number; oldpackageid?: number }): Result<{ license: Manage2SandboxLicense; from: Manage2SandboxPackage; to: Manage2SandboxPackage }> {
    const to = this.package(input.newpackageid);
    if (!to) return refuse("Invalid new package id.");
    const here = this.data.licenses.filter((l) => l.status === 1 && l.ip === input.ip);
    if (input.oldpackageid === undefined && here.length > 1) return refuse(`oldpackageid is required when more than one license uses ${input.ip}.`);
    const license = input.oldpackageid === undefined ? here[0] : here.find((l) => l.packageid === input.oldpackageid);
    if (!license) return refuse(`No active license found on ${input.ip}.`);
    const from = this.package(license.packageid)!;
    if (this.options.rules().packageUpdate === "refuse") return refuse(PACKAGE_UPDATE_REFUSED);
    if (here.some((l) => l.packageid === to.id)) return refuse(`${input.ip} already has an active ${to.name} license.`);
    license.packageid = to.id;
    this.event("package-changed", license, { from_packageid: from.id });
    this.persist();
    return done({ license: { ...license }, from, to });
  }

  updateMetadata(liscid: number, notes: string): Result<Manage2SandboxLicense> {
    const license = this.byId(liscid);
    if (!license) return refuse(EMPTY_LICENSE);
    if (license.status !== 1) return refuse(`License ${liscid} is not active.`);
    license.external_notes = notes === "" ? null : notes;
    this.persist();
    return done({ ...license });
  }

  /** What cPanel does, not an API user: a licence suspended (status 4), e.g. for abuse. */
  suspendByCpanel(liscid: number): Result<Manage2SandboxLicense> {
    const license = this.byId(liscid);
    if (!license) return refuse(EMPTY_LICENSE);
    license.status = 4;
    license.expiredon = this.unixNow();
    license.expirereason = "Suspended by cPanel";
    this.event("suspended", license);
    this.persist();
    return done({ ...license });
  }

  // ---- reads ------------------------------------------------------------------------------

  byId(liscid: number): Manage2SandboxLicense | undefined {
    return this.data.licenses.find((l) => l.licenseid === liscid);
  }

  /** Every licence (any status) of one package on one IP. */
  at(ip: string, packageid: number): Manage2SandboxLicense[] {
    return this.data.licenses.filter((l) => l.ip === ip && l.packageid === packageid);
  }

  // ---- inside -----------------------------------------------------------------------------

  private reactivateLicense(license: Manage2SandboxLicense, dryrun: boolean, notes?: string): Result<Priced> {
    const pkg = this.package(license.packageid)!;
    const taken = this.at(license.ip, license.packageid).find((l) => l.status === 1 && l.licenseid !== license.licenseid);
    if (taken) return refuse(`${license.ip} already has an active ${pkg.name} license (${taken.licenseid}).`);
    const fee = this.reactivationFee(license, pkg);
    if (dryrun) return done({ license: { ...license }, kind: "reactivated", price: fee, monthly_price: pkg.monthly_price });
    license.status = 1;
    license.expiredon = null;
    license.expirereason = null;
    if (notes !== undefined) license.external_notes = notes === "" ? null : notes;
    this.charge("reactivate", license, fee);
    this.event("reactivated", license);
    this.persist();
    return done({ license: { ...license }, kind: "reactivated", price: fee, monthly_price: pkg.monthly_price });
  }

  /** The licence's price when it expired before the last invoice (the 15th) and comes back after it. */
  private reactivationFee(license: Manage2SandboxLicense, pkg: Manage2SandboxPackage): number {
    const rule = this.options.rules().reactivationFee;
    if (rule === "never") return 0;
    if (rule === "always") return pkg.monthly_price;
    const expiredAt = (license.expiredon ?? this.unixNow()) * 1000;
    return expiredAt < lastInvoice(this.options.now()).getTime() ? pkg.monthly_price : 0;
  }

  private newLicense(ip: string, packageid: number, groupid: number, notes: string | undefined, licenseid: number): Manage2SandboxLicense {
    return {
      licenseid,
      ip,
      packageid,
      groupid,
      status: 1,
      adddate: this.unixNow(),
      expiredon: null,
      expirereason: null,
      external_notes: notes === undefined || notes === "" ? null : notes,
    };
  }

  private charge(op: Manage2Charge["op"], l: Manage2SandboxLicense, amount: number): void {
    const seq = (this.data.charges.at(-1)?.seq ?? 0) + 1;
    this.data.charges.push({ seq, at: this.options.now().toISOString(), op, licenseid: l.licenseid, ip: l.ip, packageid: l.packageid, groupid: l.groupid, amount: Math.round(amount * 100) / 100 });
  }

  private event(event: TimelineEventKind, l: Manage2SandboxLicense, extra: { from_ip?: string; from_packageid?: number } = {}): void {
    const seq = (this.data.timeline.at(-1)?.seq ?? 0) + 1;
    this.data.timeline.push({ seq, at: this.options.now().toISOString(), event, licenseid: l.licenseid, ip: l.ip, packageid: l.packageid, ...extra });
  }

  private unixNow(): number {
    return Math.floor(this.options.now().getTime() / 1000);
  }

  private fresh(): Snapshot {
    return { version: 1, licenses: [], charges: [], timeline: [], next_license_id: this.options.firstLicenseId };
  }

  private persist(): void {
    saveStateFile(this.options.statePath, this.data);
  }

}

/** The last invoice at or before `now`: the 15th, 00:00 UTC, of this month or the one before. */
export function lastInvoice(now: Date): Date {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const thisMonth = Date.UTC(y, m, 15);
  return new Date(now.getTime() >= thisMonth ? thisMonth : Date.UTC(y, m - 1, 15));
}

/**
 * The licences held after the timeline's event `seq` (after all of them when absent), replayed
 * from the events alone: a test proves a customer always held a licence by asking after each.
 */
export function holdingsAfter(timeline: readonly Manage2TimelineEvent[], seq?: number): Holding[] {
  return replay(timeline, (e) => seq === undefined || e.seq <= seq);
}

/** The licences held at an instant (ISO), from the timeline: what a snapshot invoice then bills. */
export function holdingsAt(timeline: readonly Manage2TimelineEvent[], at: string): Holding[] {
  const instant = Date.parse(at);
  return replay(timeline, (e) => Date.parse(e.at) <= instant);
}

export interface Holding {
  licenseid: number;
  ip: string;
  packageid: number;
}

function replay(timeline: readonly Manage2TimelineEvent[], upTo: (e: Manage2TimelineEvent) => boolean): Holding[] {
  const held = new Map<number, Holding>();
  for (const e of timeline) {
    if (!upTo(e)) continue;
    if (e.event === "expired" || e.event === "suspended") held.delete(e.licenseid);
    else held.set(e.licenseid, { licenseid: e.licenseid, ip: e.ip, packageid: e.packageid });
  }
  return [...held.values()];
}

/** An IP as the sandbox keeps it (one spelling), or undefined when it is none. */
export function sandboxIp(value: string | undefined): string | undefined {
  return value === undefined ? undefined : canonicalIp(value);
}

