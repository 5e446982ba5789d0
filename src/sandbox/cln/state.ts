import { z } from "zod";
import { CLN_TYPES, canConvert, clnTypeInfo } from "../../vocabulary/cln-types.js";
import { loadStateFile, saveStateFile } from "../state-file.js";

/**
 * What the CLN sandbox holds: the IP licences of its accounts, the ledger of purchases and the
 * timeline of holdings. Domain only; the routes render it as CLN answers.
 *
 * Billing (imunify360.com/legal/terms-of-use/billing-terms, "IP-based licensing account"): each
 * licence is billed per month while it is registered, invoiced on the 1st for the month before.
 * So the ledger has one purchase per register that creates a licence, none for a register that
 * finds it, and `invoice(month)` bills every licence held at any time in that month, one month
 * each (CLN publishes no proration). A convert buys nothing: the licence changes type in place
 * and the month is billed at the types it held (how CLN bills a convert is not published).
 */

export interface ClnHolding {
  ip: string;
  type: number;
  /** ISO instant. */
  created: string;
  /** A server checked in with this licence. */
  registered: boolean;
  server_info: string | null;
  /** ISO instant. */
  last_checkin: string | null;
}

export interface ClnPurchase {
  seq: number;
  at: string;
  op: "register";
  ip: string;
  type: number;
  /** What the licence costs a month (the sandbox's price list). */
  price_per_month: number;
}

export interface ClnTimelineEntry {
  seq: number;
  at: string;
  event: "acquired" | "released";
  ip: string;
  type: number;
  /** The call that made it. */
  cause: "register" | "remove" | "convert";
}

export interface ClnInvoiceLine {
  ip: string;
  type: number;
  amount: number;
}

export type ClnRegisterOutcome =
  | { ok: true; license: ClnHolding; created: boolean }
  | { ok: false; reason: "held_by_another" | "excluded"; heldType: number };

/**
 * Monthly prices in USD, from the type list with prices in myadmin-plugins/cloudlinux-licensing
 * (bin/cloudlinux_types.txt, 2025); types it prices not get 10. For the invoice only.
 */
const PRICES: Readonly<Record<number, number>> = { 4: 6, 5: 12, 16: 1.7, 17: 5, 40: 3, 41: 4, 42: 8, 43: 11.2, 49: 16, 1002: 13 };
const DEFAULT_PRICE = 10;

export function clnPrice(type: number): number {
  return PRICES[type] ?? DEFAULT_PRICE;
}

const holdingSchema = z.object({
  login: z.string(),
  ip: z.string(),
  type: z.number().int(),
  created: z.string(),
  registered: z.boolean(),
  server_info: z.string().nullable(),
  last_checkin: z.string().nullable(),
});
type OwnedHolding = z.infer<typeof holdingSchema>;

const snapshotSchema = z.object({
  version: z.literal(1),
  holdings: z.array(holdingSchema),
  purchases: z.array(
    z.object({ login: z.string(), seq: z.number().int(), at: z.string(), op: z.literal("register"), ip: z.string(), type: z.number().int(), price_per_month: z.number() }),
  ),
  timeline: z.array(
    z.object({
      login: z.string(),
      seq: z.number().int(),
      at: z.string(),
      event: z.enum(["acquired", "released"]),
      ip: z.string(),
      type: z.number().int(),
      cause: z.enum(["register", "remove", "convert"]),
    }),
  ),
  next_seq: z.number().int(),
});
type Snapshot = z.infer<typeof snapshotSchema>;

export interface ClnStateOptions {
  now: () => Date;
  /**
   * Types of one product line exclude each other on an IP (one CloudLinux OS edition, one
   * Imunify tier). CLN's documentation only shows that a type held by anyone is no longer
   * available there; whether other types exclude it is not published. (Default: false)
   */
  exclusiveProducts?: boolean;
  /** JSON file the state survives restarts in; loaded if present, rewritten after every change. */
  statePath?: string;
}

export class ClnState {
  private data: Snapshot;
  exclusiveProducts: boolean;

  constructor(private readonly options: ClnStateOptions) {
    this.data = loadStateFile(options.statePath, snapshotSchema, "CLN sandbox", "a CLN sandbox state") ?? freshSnapshot();
    this.exclusiveProducts = options.exclusiveProducts ?? false;
  }

  reset(): void {
    this.data = freshSnapshot();
    this.persist();
  }

  holdings(login: string): ClnHolding[] {
    return this.data.holdings.filter((h) => h.login === login).map(publicHolding);
  }

  /** This account's holdings on these IPs. */
  holdingsOn(login: string, ips: readonly string[]): ClnHolding[] {
    return this.data.holdings.filter((h) => h.login === login && ips.includes(h.ip)).map(publicHolding);
  }

  /** Types registered on the IP by anyone, in ascending order. */
  typesOn(ip: string): number[] {
    return [...new Set(this.data.holdings.filter((h) => h.ip === ip).map((h) => h.type))].sort((a, b) => a - b);
  }

  /** Types that can still be registered on the IP, and the ones this account holds there. */
  availability(login: string, ip: string): { available: number[]; owned: number[] } {
    const here = this.data.holdings.filter((h) => h.ip === ip);
    const owned = here.filter((h) => h.login === login).map((h) => h.type).sort((a, b) => a - b);
    const available = Object.keys(CLN_TYPES)
      .map(Number)
      .filter((type) => this.blocker(ip, type) === undefined)
      .sort((a, b) => a - b);
    return { available, owned };
  }

  register(login: string, ip: string, type: number): ClnRegisterOutcome {
    const mine = this.find(login, ip, type);
    // "returns information about created or already registered license": the same answer, nothing bought.
    if (mine) return { ok: true, license: publicHolding(mine), created: false };
    const blocker = this.blocker(ip, type);
    if (blocker) return { ok: false, reason: blocker.type === type ? "held_by_another" : "excluded", heldType: blocker.type };
    const holding: OwnedHolding = { login, ip, type, created: this.timestamp(), registered: false, server_info: null, last_checkin: null };
    this.data.holdings.push(holding);
    this.record(login, "acquired", ip, type, "register");
    this.data.purchases.push({ login, seq: this.data.next_seq++, at: this.timestamp(), op: "register", ip, type, price_per_month: clnPrice(type) });
    this.persist();
    return { ok: true, license: publicHolding(holding), created: true };
  }

  /** Removes this account's licence of `type` on the IP, or all of its types there; false when it holds none. */
  remove(login: string, ip: string, type: number | undefined): boolean {
    const gone = this.data.holdings.filter((h) => h.login === login && h.ip === ip && (type === undefined || h.type === type));
    if (gone.length === 0) return false;
    this.data.holdings = this.data.holdings.filter((h) => !gone.includes(h));
    for (const h of gone) this.record(login, "released", h.ip, h.type, "remove");
    this.persist();
    return true;
  }

  /**
   * Changes this account's Imunify licence into another Imunify360 type in place; false when it
   * holds no such licence or the new type cannot be held there.
   */
  convert(login: string, ip: string, type: number, typeTo: number): boolean {
    const holding = this.find(login, ip, type);
    if (!holding || !canConvert(type, typeTo)) return false;
    const blocker = this.blocker(ip, typeTo, holding);
    if (blocker) return false;
    holding.type = typeTo;
    // One change: the new type is held before the old one goes, so no moment without a licence.
    this.record(login, "acquired", ip, typeTo, "convert");
    this.record(login, "released", ip, type, "convert");
    this.persist();
    return true;
  }

  /** A server checks in with the licence, as `cldeploy` or an agent would: `registered` turns true. */
  checkIn(login: string, ip: string, type: number, serverInfo: string): boolean {
    const holding = this.find(login, ip, type);
    if (!holding) return false;
    holding.registered = true;
    holding.server_info = serverInfo;
    holding.last_checkin = this.timestamp();
    this.persist();
    return true;
  }

  purchases(login: string): ClnPurchase[] {
    return this.data.purchases.filter((p) => p.login === login).map(({ login: _owner, ...p }) => p);
  }

  timeline(login: string): ClnTimelineEntry[] {
    return this.data.timeline.filter((e) => e.login === login).map(({ login: _owner, ...e }) => e);
  }

  /**
   * What the account is billed for the month `YYYY-MM` (UTC): each (ip, type) held at any time
   * in it, one month's price each.
   */
  invoice(login: string, month: string): ClnInvoiceLine[] {
    const start = Date.parse(`${month}-01T00:00:00Z`);
    const end = new Date(start);
    end.setUTCMonth(end.getUTCMonth() + 1);
    const held = new Map<string, { ip: string; type: number; since?: number }>();
    const billed = new Map<string, ClnInvoiceLine>();
    const bill = (ip: string, type: number) => billed.set(`${ip}|${type}`, { ip, type, amount: clnPrice(type) });
    for (const e of this.timeline(login)) {
      const key = `${e.ip}|${e.type}`;
      const at = Date.parse(e.at);
      if (e.event === "acquired") held.set(key, { ip: e.ip, type: e.type, since: at });
      else {
        const since = held.get(key)?.since;
        if (since !== undefined && since < end.getTime() && at >= start) bill(e.ip, e.type);
        held.delete(key);
      }
    }
    for (const h of held.values()) if (h.since !== undefined && h.since < end.getTime()) bill(h.ip, h.type);
    return [...billed.values()];
  }

  // ---- internals ------------------------------------------------------------------------

  private find(login: string, ip: string, type: number): OwnedHolding | undefined {
    return this.data.holdings.find((h) => h.login === login && h.ip === ip && h.type === type);
  }

  /**
   * The holding that keeps `type` from being registered on the IP: the same type held by anyone,
   * or, with exclusiveProducts, a type of the same product line (`except` aside, being converted).
   */
  private blocker(ip: string, type: number, except?: OwnedHolding): OwnedHolding | undefined {
    const product = clnTypeInfo(type)?.product;
    return this.data.holdings.find(
      (h) => h !== except && h.ip === ip && (h.type === type || (this.exclusiveProducts && product !== undefined && clnTypeInfo(h.type)?.product === product)),
    );
  }

  private record(login: string, event: ClnTimelineEntry["event"], ip: string, type: number, cause: ClnTimelineEntry["cause"]): void {
    this.data.timeline.push({ login, seq: this.data.next_seq++, at: this.timestamp(), event, ip, type, cause });
  }

  private timestamp(): string {
    return this.options.now().toISOString();
  }

  private persist(): void {
    saveStateFile(this.options.statePath, this.data);
  }

}

function freshSnapshot(): Snapshot {
  return { version: 1, holdings: [], purchases: [], timeline: [], next_seq: 1 };
}

function publicHolding({ login: _owner, ...holding }: OwnedHolding): ClnHolding {
  return holding;
}
