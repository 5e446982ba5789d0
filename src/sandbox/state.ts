import { MAIN_RESELLER_ID } from "../vocabulary/sandbox-identity.js";
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { CPANEL_COMPANIONS, LITESPEED_VARIANTS, type LitespeedVariant, type ProductType } from "../vocabulary/products.js";
import { BUNDLES, type BundleId, bundlePrice, licensePrice } from "../vocabulary/sandbox-prices.js";
import { loadStateFile, saveStateFile } from "./state-file.js";

export type Via = "v1" | "v2";
export type LicenseStatus = "active" | "suspended";
export type Role = "admin" | "reseller" | "sub_reseller";

export interface SandboxLicense {
  ip: string;
  /** A product type, or "ssl" for the free certificate that comes with cpanel. */
  type: string;
  status: LicenseStatus;
  variant?: LitespeedVariant;
  billingcycle: number;
  created_at: string;
  expires_at: string;
  key: string;
  free?: true;
  parent?: "cpanel";
  bundle_key?: string;
}

export interface Charge {
  seq: number;
  at: string;
  via: Via;
  op: "register" | "renew" | "bundle";
  ip: string;
  /** Product type, or bundle id for op "bundle". */
  type: string;
  months: number;
  amount: number;
  balance_after: number;
}

export interface Account {
  id: number;
  name: string;
  email: string;
  role: Role;
  balance: number;
  /** v1 bearer token of resellers the admin created; the built-in accounts' tokens come from options. */
  token?: string;
  /** The reseller a sub-reseller belongs to. */
  parent_id?: number;
  commission_rate?: number;
  domain?: string;
  commission?: number;
}

export interface SubResellerRecord {
  id: number;
  name: string;
  email: string;
  role: "sub_reseller";
  commission_rate: number;
  balance: number;
}

export interface ResellerRecord {
  id: number;
  name: string;
  email: string;
  role: "reseller";
  balance: number;
  domain: string;
  commission: number;
  token: string;
}

export interface BundleStatus {
  bundle_key: string;
  bundle: BundleId;
  ip: string;
  status: LicenseStatus;
  expires_at: string;
}

export interface BundleRegistration {
  bundle_key: string;
  bundle: BundleId;
  ip: string;
  expires_at: string;
  licenses: SandboxLicense[];
}

/**
 * Why a domain operation was refused. Each interface renders these in its own wire
 * format, so the state never speaks HTTP.
 */
export type Failure =
  | { kind: "not_found" }
  | { kind: "insufficient_balance" }
  | { kind: "rejected"; field: string; message: string };

export type Outcome<T> = { ok: true; value: T } | { ok: false; failure: Failure };

export const ADMIN_ACCOUNT_ID = 0;
export const LICENSE_EXISTS = "License already exists";

const licenseSchema = z.object({
  account_id: z.number().int(),
  ip: z.string(),
  type: z.string(),
  status: z.enum(["active", "suspended"]),
  variant: z.enum(LITESPEED_VARIANTS).optional(),
  billingcycle: z.number().int(),
  created_at: z.string(),
  expires_at: z.string(),
  key: z.string(),
  free: z.literal(true).optional(),
  parent: z.literal("cpanel").optional(),
  bundle_key: z.string().optional(),
});
type OwnedLicense = z.infer<typeof licenseSchema>;

const bundleSchema = z.object({
  account_id: z.number().int(),
  bundle_key: z.string(),
  bundle: z.enum(Object.keys(BUNDLES) as [BundleId, ...BundleId[]]),
  ip: z.string(),
  billingcycle: z.number().int(),
  created_at: z.string(),
});

const chargeSchema = z.object({
  account_id: z.number().int(),
  seq: z.number().int(),
  at: z.string(),
  via: z.enum(["v1", "v2"]),
  op: z.enum(["register", "renew", "bundle"]),
  ip: z.string(),
  type: z.string(),
  months: z.number().int(),
  amount: z.number(),
  balance_after: z.number(),
});

const accountSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  email: z.string(),
  role: z.enum(["admin", "reseller", "sub_reseller"]),
  balance: z.number(),
  token: z.string().optional(),
  parent_id: z.number().int().optional(),
  commission_rate: z.number().optional(),
  domain: z.string().optional(),
  commission: z.number().optional(),
});

const snapshotSchema = z.object({
  version: z.literal(1),
  accounts: z.array(accountSchema),
  licenses: z.array(licenseSchema),
  bundles: z.array(bundleSchema),
  charges: z.array(chargeSchema),
  next_account_id: z.number().int(),
  next_charge_seq: z.number().int(),
});
type Snapshot = z.infer<typeof snapshotSchema>;

export interface SandboxStateOptions {
  openingBalance: number;
  now: () => Date;
  /** JSON file the state survives restarts in; loaded if present, rewritten after every change. */
  statePath?: string;
}

export class SandboxState {
  private data: Snapshot;

  constructor(private readonly options: SandboxStateOptions) {
    this.data = loadStateFile(options.statePath, snapshotSchema, "sandbox", "a sandbox state") ?? freshSnapshot(options.openingBalance);
  }

  /** Back to a new sandbox: only the two built-in accounts, opening balance, nothing bought. */
  reset(): void {
    this.data = freshSnapshot(this.options.openingBalance);
    this.persist();
  }

  // ---- accounts -------------------------------------------------------------------------

  account(id: number): Account | undefined {
    const found = this.data.accounts.find((a) => a.id === id);
    return found ? { ...found } : undefined;
  }

  accountByToken(token: string): Account | undefined {
    const found = this.data.accounts.find((a) => a.token !== undefined && a.token === token);
    return found ? { ...found } : undefined;
  }

  balance(accountId: number): number {
    return this.mutableAccount(accountId).balance;
  }

  setBalance(accountId: number, balance: number): void {
    this.mutableAccount(accountId).balance = money(balance);
    this.persist();
  }

  // ---- licences -------------------------------------------------------------------------

  licenses(accountId: number): SandboxLicense[] {
    return this.data.licenses.filter((l) => l.account_id === accountId).map(publicLicense);
  }

  license(accountId: number, ip: string, type: string): SandboxLicense | undefined {
    const found = this.find(accountId, ip, type);
    return found ? publicLicense(found) : undefined;
  }

  register(accountId: number, input: { ip: string; type: ProductType; months: number; via: Via }): Outcome<SandboxLicense> {
    if (this.find(accountId, input.ip, input.type)) return rejected("ip", LICENSE_EXISTS);
    const amount = licensePrice(input.type, input.months);
    if (!this.canAfford(accountId, amount)) return { ok: false, failure: { kind: "insufficient_balance" } };

    const created = this.createLicense(accountId, input.ip, input.type, input.months);
    this.charge(accountId, { via: input.via, op: "register", ip: input.ip, type: input.type, months: input.months, amount });
    this.persist();
    return { ok: true, value: publicLicense(created) };
  }

  renew(accountId: number, input: { ip: string; type: ProductType; months: number; via: Via }): Outcome<SandboxLicense> {
    const license = this.find(accountId, input.ip, input.type);
    if (!license) return notFound();
    if (license.free) return rejected("type", "Free licences renew with their cpanel licence");
    const amount = licensePrice(input.type, input.months);
    if (!this.canAfford(accountId, amount)) return { ok: false, failure: { kind: "insufficient_balance" } };

    // Renewing early must not cost the customer the days they had left.
    const from = new Date(Math.max(this.options.now().getTime(), Date.parse(license.expires_at)));
    const expiresAt = addMonths(from, input.months).toISOString();
    for (const l of [license, ...this.companionsOf(license)]) {
      l.expires_at = expiresAt;
      l.billingcycle = input.months;
    }
    this.charge(accountId, { via: input.via, op: "renew", ip: input.ip, type: input.type, months: input.months, amount });
    this.persist();
    return { ok: true, value: publicLicense(license) };
  }

  setStatus(accountId: number, ip: string, type: ProductType, status: LicenseStatus): Outcome<SandboxLicense> {
    const license = this.find(accountId, ip, type);
    if (!license) return notFound();
    for (const l of [license, ...this.companionsOf(license)]) l.status = status;
    this.persist();
    return { ok: true, value: publicLicense(license) };
  }

  changeIp(accountId: number, input: { ip: string; type: ProductType; newip: string }): Outcome<SandboxLicense> {
    const license = this.find(accountId, input.ip, input.type);
    if (!license) return notFound();
    if (license.free) return rejected("type", "Free licences move with their cpanel licence");
    const moving = [license, ...this.companionsOf(license)];
    if (moving.some((l) => this.find(accountId, input.newip, l.type))) return rejected("newip", LICENSE_EXISTS);

    for (const l of moving) l.ip = input.newip;
    this.persist();
    return { ok: true, value: publicLicense(license) };
  }

  /** v1 names the variant it expects to replace (`from`); v2 just sets the new one. */
  changeCore(accountId: number, input: { ip: string; from?: LitespeedVariant; to: LitespeedVariant }): Outcome<SandboxLicense> {
    const license = this.find(accountId, input.ip, "litespeed");
    if (!license) return notFound();
    if (input.from !== undefined && input.from !== license.variant) {
      return rejected("old_type", "does not match the current variant");
    }
    license.variant = input.to;
    this.persist();
    return { ok: true, value: publicLicense(license) };
  }

  // ---- bundles --------------------------------------------------------------------------

  registerBundle(accountId: number, input: { ip: string; bundle: BundleId; months: number; via: Via }): Outcome<BundleRegistration> {
    const types = BUNDLES[input.bundle].types;
    if (types.some((t) => this.find(accountId, input.ip, t))) return rejected("ip", LICENSE_EXISTS);
    const amount = bundlePrice(input.bundle, input.months);
    if (!this.canAfford(accountId, amount)) return { ok: false, failure: { kind: "insufficient_balance" } };

    const bundleKey = `BK-${randomHex(8)}`;
    const created = types.flatMap((type) => {
      const component = this.createLicense(accountId, input.ip, type, input.months, bundleKey);
      return [component, ...this.companionsOf(component)];
    });
    this.data.bundles.push({
      account_id: accountId,
      bundle_key: bundleKey,
      bundle: input.bundle,
      ip: input.ip,
      billingcycle: input.months,
      created_at: this.timestamp(),
    });
    this.charge(accountId, { via: input.via, op: "bundle", ip: input.ip, type: input.bundle, months: input.months, amount });
    this.persist();
    const value: BundleRegistration = {
      bundle_key: bundleKey,
      bundle: input.bundle,
      ip: input.ip,
      expires_at: created[0]?.expires_at ?? this.timestamp(),
      licenses: created.map(publicLicense),
    };
    return { ok: true, value };
  }

  bundleStatus(accountId: number, bundleKey: string): Outcome<BundleStatus> {
    const bundle = this.data.bundles.find((b) => b.account_id === accountId && b.bundle_key === bundleKey);
    if (!bundle) return notFound();
    // The bundle is what its component licences are now: they may have moved or been suspended since.
    const components = this.data.licenses.filter(
      (l) => l.account_id === accountId && l.bundle_key === bundleKey && !l.free,
    );
    const suspended = components.some((l) => l.status === "suspended");
    const expiries = components.map((l) => l.expires_at).sort();
    return {
      ok: true,
      value: {
        bundle_key: bundle.bundle_key,
        bundle: bundle.bundle,
        ip: components[0]?.ip ?? bundle.ip,
        status: suspended ? "suspended" : "active",
        expires_at: expiries[0] ?? bundle.created_at,
      },
    };
  }

  // ---- sub-resellers --------------------------------------------------------------------

  subResellers(accountId: number): SubResellerRecord[] {
    return this.data.accounts.filter((a) => a.role === "sub_reseller" && a.parent_id === accountId).map(subResellerRecord);
  }

  createSubReseller(
    accountId: number,
    input: { name: string; email: string; commission_rate: number },
  ): Outcome<SubResellerRecord> {
    if (this.emailTaken(input.email)) return rejected("email", "The email has already been taken.");
    const account: Account = {
      id: this.data.next_account_id++,
      name: input.name,
      email: input.email,
      role: "sub_reseller",
      balance: 0,
      parent_id: accountId,
      commission_rate: input.commission_rate,
    };
    this.data.accounts.push(account);
    this.persist();
    return { ok: true, value: subResellerRecord(account) };
  }

  creditSubReseller(accountId: number, subId: number, amount: number): Outcome<SubResellerRecord> {
    const sub = this.data.accounts.find((a) => a.id === subId && a.role === "sub_reseller" && a.parent_id === accountId);
    if (!sub) return notFound();
    if (!this.canAfford(accountId, amount)) return { ok: false, failure: { kind: "insufficient_balance" } };
    const payer = this.mutableAccount(accountId);
    payer.balance = money(payer.balance - amount);
    sub.balance = money(sub.balance + amount);
    this.persist();
    return { ok: true, value: subResellerRecord(sub) };
  }

  // ---- admin ----------------------------------------------------------------------------

  createReseller(input: {
    name: string;
    email: string;
    balance: number;
    domain: string;
    commission: number;
  }): Outcome<ResellerRecord> {
    if (this.emailTaken(input.email)) return rejected("email", "The email has already been taken.");
    const id = this.data.next_account_id++;
    const account: Account = {
      id,
      name: input.name,
      email: input.email,
      role: "reseller",
      balance: money(input.balance),
      token: `sandbox-reseller-${id}-${randomHex(12).toLowerCase()}`,
      domain: input.domain,
      commission: input.commission,
    };
    this.data.accounts.push(account);
    this.persist();
    return { ok: true, value: resellerRecord(account) };
  }

  resellerBalance(id: number): Outcome<{ id: number; balance: number }> {
    const reseller = this.data.accounts.find((a) => a.id === id && a.role === "reseller");
    if (!reseller) return notFound();
    return { ok: true, value: { id, balance: reseller.balance } };
  }

  creditReseller(id: number, amount: number): Outcome<{ id: number; balance: number }> {
    const reseller = this.data.accounts.find((a) => a.id === id && a.role === "reseller");
    if (!reseller) return notFound();
    reseller.balance = money(reseller.balance + amount);
    this.persist();
    return { ok: true, value: { id, balance: reseller.balance } };
  }

  // ---- ledger ---------------------------------------------------------------------------

  charges(accountId: number): Charge[] {
    return this.data.charges
      .filter((c) => c.account_id === accountId)
      .map(({ account_id: _owner, ...charge }) => charge);
  }

  // ---- internals ------------------------------------------------------------------------

  private find(accountId: number, ip: string, type: string): OwnedLicense | undefined {
    return this.data.licenses.find((l) => l.account_id === accountId && l.ip === ip && l.type === type);
  }

  private companionsOf(license: OwnedLicense): OwnedLicense[] {
    if (license.type !== "cpanel") return [];
    return this.data.licenses.filter(
      (l) => l.account_id === license.account_id && l.ip === license.ip && l.free === true && l.parent === "cpanel",
    );
  }

  /** Creates the licence and, for cpanel, the free companions that are not already there. */
  private createLicense(accountId: number, ip: string, type: ProductType, months: number, bundleKey?: string): OwnedLicense {
    const createdAt = this.timestamp();
    const expiresAt = addMonths(this.options.now(), months).toISOString();
    const make = (licenseType: string, extra: Partial<OwnedLicense>): OwnedLicense => ({
      account_id: accountId,
      ip,
      type: licenseType,
      status: "active",
      ...(licenseType === "litespeed" ? { variant: "litespeed" as const } : {}),
      billingcycle: months,
      created_at: createdAt,
      expires_at: expiresAt,
      key: licenseKey(),
      ...extra,
      ...(bundleKey === undefined ? {} : { bundle_key: bundleKey }),
    });
    const license = make(type, {});
    this.data.licenses.push(license);
    if (type === "cpanel") {
      for (const companion of CPANEL_COMPANIONS) {
        // A paid licence of the same product at this IP already covers the customer.
        if (this.find(accountId, ip, companion)) continue;
        this.data.licenses.push(make(companion, { free: true, parent: "cpanel" }));
      }
    }
    return license;
  }

  private charge(accountId: number, entry: Omit<Charge, "seq" | "at" | "balance_after">): void {
    const account = this.mutableAccount(accountId);
    account.balance = money(account.balance - entry.amount);
    this.data.charges.push({
      account_id: accountId,
      seq: this.data.next_charge_seq++,
      at: this.timestamp(),
      ...entry,
      balance_after: account.balance,
    });
  }

  private canAfford(accountId: number, amount: number): boolean {
    return this.mutableAccount(accountId).balance >= amount;
  }

  private emailTaken(email: string): boolean {
    return this.data.accounts.some((a) => a.email.toLowerCase() === email.toLowerCase());
  }

  private mutableAccount(id: number): Account {
    const account = this.data.accounts.find((a) => a.id === id);
    if (!account) throw new Error(`sandbox account ${id} does not exist`);
    return account;
  }

  private timestamp(): string {
    return this.options.now().toISOString();
  }

  private persist(): void {
    saveStateFile(this.options.statePath, this.data);
  }

}

function freshSnapshot(openingBalance: number): Snapshot {
  return {
    version: 1,
    accounts: [
      { id: ADMIN_ACCOUNT_ID, name: "Sandbox Admin", email: "admin@sandbox.invalid", role: "admin", balance: 0 },
      {
        id: MAIN_RESELLER_ID,
        name: "Sandbox Reseller",
        email: "reseller@sandbox.invalid",
        role: "reseller",
        balance: money(openingBalance),
        domain: "sandbox.invalid",
        commission: 0,
      },
    ],
    licenses: [],
    bundles: [],
    charges: [],
    next_account_id: 2,
    next_charge_seq: 1,
  };
}

function publicLicense({ account_id: _owner, ...license }: OwnedLicense): SandboxLicense {
  return license;
}

function subResellerRecord(a: Account): SubResellerRecord {
  return { id: a.id, name: a.name, email: a.email, role: "sub_reseller", commission_rate: a.commission_rate ?? 0, balance: a.balance };
}

function resellerRecord(a: Account): ResellerRecord {
  return {
    id: a.id,
    name: a.name,
    email: a.email,
    role: "reseller",
    balance: a.balance,
    domain: a.domain ?? "",
    commission: a.commission ?? 0,
    token: a.token ?? "",
  };
}

function notFound(): { ok: false; failure: Failure } {
  return { ok: false, failure: { kind: "not_found" } };
}

function rejected(field: string, message: string): { ok: false; failure: Failure } {
  return { ok: false, failure: { kind: "rejected", field, message } };
}

/** Calendar months in UTC; a day that does not exist in the target month becomes its last day (Jan 31 + 1 = Feb 28/29). */
export function addMonths(from: Date, months: number): Date {
  const target = new Date(from.getTime());
  const day = target.getUTCDate();
  target.setUTCDate(1);
  target.setUTCMonth(target.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(day, lastDay));
  return target;
}

/** Balances are money: keep them in cents so 0.1 + 0.2 credits do not drift. */
function money(n: number): number {
  return Math.round(n * 100) / 100;
}

function randomHex(bytes: number): string {
  return randomBytes(bytes).toString("hex").toUpperCase();
}

function licenseKey(): string {
  return `LB-${randomHex(2)}-${randomHex(2)}-${randomHex(2)}-${randomHex(2)}`;
}
