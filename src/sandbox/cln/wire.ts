import type { Response } from "express";
import { z } from "zod";
import type { FaultWire } from "../faults.js";
import type { ClnHolding } from "./state.js";

/**
 * How the CLN sandbox writes its answers: CLN's envelope `{"success", "message", "data"}`
 * (CloudLinux REST API, "REST API basics"), its field names and types, and the oddities the
 * sources leave open, selectable as quirks.
 */

export interface ClnQuirks {
  /** Type numbers written as strings ("41"); the documentation writes numbers. (Default: false) */
  typesAsStrings: boolean;
  /** An empty list written as null ("data": null is the envelope's empty value). (Default: false) */
  emptyAsNull: boolean;
  /** `message` left out of successful answers: the documentation calls it optional. (Default: false, "") */
  omitMessage: boolean;
  /** The HTTP status of a `success: false` answer; CLN's is not published. (Default: 200) */
  refusalStatus: number;
  /** The offset CLN's times are written with, in minutes east of UTC ("2014-04-30T11:26-0400"). (Default: -240) */
  utcOffsetMinutes: number;
  /** Types of one product line exclude each other on an IP (see ClnStateOptions). (Default: false) */
  exclusiveProducts: boolean;
}

export const DEFAULT_QUIRKS: ClnQuirks = {
  typesAsStrings: false,
  emptyAsNull: false,
  omitMessage: false,
  refusalStatus: 200,
  utcOffsetMinutes: -240,
  exclusiveProducts: false,
};

export const quirksPatchSchema = z.strictObject({
  typesAsStrings: z.boolean().optional(),
  emptyAsNull: z.boolean().optional(),
  omitMessage: z.boolean().optional(),
  refusalStatus: z.number().int().min(200).max(599).optional(),
  utcOffsetMinutes: z.number().int().min(-720).max(840).optional(),
  exclusiveProducts: z.boolean().optional(),
});

/**
 * The sandbox's failure texts. CLN publishes none for the REST API; these take the XML-RPC
 * API's names for its error codes (10 "Not authorized", 30 "Invalid call arguments", 40
 * "Invalid IP format") and its plain-text sample ("Unexpected server error").
 */
export const CLN_MESSAGES = {
  notAuthorized: "Not authorized",
  invalidIp: (ip: string) => `Invalid IP format: ${ip}`,
  invalidType: (name: "type" | "type_to", text: string) =>
    name === "type" ? `Invalid license type: ${text}` : `Invalid call arguments: type_to ${text} is not an IP license type`,
  missing: (name: string) => `Invalid call arguments: ${name} is required`,
  tooManyIps: "Invalid call arguments: up to 100 IP addresses",
  notImunify: (name: "type" | "type_to") =>
    name === "type" ? "Invalid call arguments: type must be an Imunify IP license type" : "Invalid call arguments: type_to must be an Imunify360 IP license type",
  heldByAnother: (ip: string, type: number) => `IP license of type ${type} for ${ip} is already registered by another customer`,
  excluded: (ip: string, held: number, type: number) => `IP license of type ${held} is already registered for ${ip} and excludes type ${type}`,
  serverError: "Unexpected server error",
} as const;

/** Every answer of the API, success or not, in CLN's envelope. */
export class ClnWriter {
  constructor(private readonly quirks: () => ClnQuirks) {}

  ok(res: Response, data: unknown): void {
    const body: Record<string, unknown> = { success: true, data };
    if (!this.quirks().omitMessage) body.message = "";
    res.status(200).json(body);
  }

  refuse(res: Response, message: string, status = this.quirks().refusalStatus): void {
    res.status(status).json({ success: false, message, data: null });
  }

  type(type: number): number | string {
    return this.quirks().typesAsStrings ? String(type) : type;
  }

  list<T>(items: T[]): T[] | null {
    return items.length === 0 && this.quirks().emptyAsNull ? null : items;
  }

  /** `{ip, type, registered, created}`, as register and list answer a licence. */
  license(h: ClnHolding): Record<string, unknown> {
    return { ip: h.ip, type: this.type(h.type), registered: h.registered, created: this.time(h.created) };
  }

  /** `server` adds the server that checked in and when. */
  serverLicense(h: ClnHolding): Record<string, unknown> {
    return { server_info: h.server_info, ...this.license(h), last_checkin: h.last_checkin === null ? null : this.time(h.last_checkin) };
  }

  /** "yyyy-MM-ddTHH:mmZ" (REST API), e.g. 2014-04-30T11:26-0400. */
  time(iso: string): string {
    const offset = this.quirks().utcOffsetMinutes;
    const local = new Date(Date.parse(iso) + offset * 60_000).toISOString().slice(0, 16);
    const sign = offset < 0 ? "-" : "+";
    const abs = Math.abs(offset);
    return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}${String(abs % 60).padStart(2, "0")}`;
  }
}

/**
 * The faults' view of CLN: its 503 is a load balancer's HTML page, not an envelope (CLN's own
 * answer to an outage is not published); an answer commits a change when it says success and its
 * data is not false (remove and convert answer `data: false` for "nothing done").
 */
export const CLN_FAULT_WIRE: FaultWire = {
  unavailable(res) {
    res
      .status(503)
      .type("text/html")
      .send("<html>\r\n<head><title>503 Service Temporarily Unavailable</title></head>\r\n<body>\r\n<center><h1>503 Service Temporarily Unavailable</h1></center>\r\n</body>\r\n</html>\r\n");
  },
  commits(status, body) {
    if (status < 200 || status > 299 || typeof body !== "object" || body === null) return false;
    const { success, data } = body as { success?: unknown; data?: unknown };
    return success === true && data !== false;
  },
};
