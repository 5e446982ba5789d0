import express, { type Router } from "express";
import { z } from "zod";
import { fieldErrors } from "../../validation/field-errors.js";
import { isClnType } from "../../vocabulary/cln-types.js";
import { canonicalIp } from "../../vocabulary/ip-address.js";
import { hadMalformedBody, tolerantJson } from "../body.js";
import { faultsPatchSchema, type Faults } from "../faults.js";
import type { RecordedRequest } from "../request-log.js";
import type { ClnHolding, ClnInvoiceLine, ClnPurchase, ClnTimelineEntry } from "./state.js";
import { quirksPatchSchema, type ClnQuirks } from "./wire.js";

/**
 * /_sandbox of the CLN sandbox: lets a test in another process inspect and steer it, as the
 * reseller sandbox's control routes do. Admin token only; never recorded, never delayed or failed
 * by the faults it sets.
 */

/** What the control routes steer: the sandbox's own handle (app.ts). */
export interface ClnSandboxControls {
  /** The account's purchases: each register that created a licence. */
  ledger(): ClnPurchase[];
  /** When each of the account's licences came and went, in order. */
  timeline(): ClnTimelineEntry[];
  /** The account's licences now. */
  licenses(): ClnHolding[];
  /** Every API request in arrival order, without its token. */
  requests(): RecordedRequest<"cln">[];
  /** What the account is billed for `YYYY-MM`. */
  invoice(month: string): ClnInvoiceLine[];
  faults(): Faults;
  setFaults(patch: Partial<Faults>): Faults;
  quirks(): ClnQuirks;
  setQuirks(patch: Partial<ClnQuirks>): ClnQuirks;
  /** The next register that passes the token and argument checks is refused with `message`, doing nothing. */
  failNextRegister(message: string): void;
  /** The next remove that passes the token and argument checks is refused with `message`, doing nothing. */
  failNextRemove(message: string): void;
  /** Another CLN customer registers the licence; false when it cannot (someone holds it). */
  holdByAnother(ip: string, type: number): boolean;
  /** A server checks in with the account's licence; false when the account holds none such. */
  checkIn(ip: string, type: number, serverInfo?: string): boolean;
  /** Back to a new sandbox: no licences, purchases, timeline, requests, faults or armed refusals; quirks as first given. */
  reset(): void;
}

const ip = z.string().refine((s) => canonicalIp(s) !== undefined, { error: "must be an IP address" }).transform((s) => canonicalIp(s)!);
const type = z.number().int().refine(isClnType, { error: "is not a CLN IP licence type" });
const failureSchema = z.strictObject({ message: z.string().min(1) });
const holdingSchema = z.strictObject({ ip, type });
const checkInSchema = z.strictObject({ ip, type, server_info: z.string().min(1).optional() });
const monthSchema = z.strictObject({ month: z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/, { error: "must be YYYY-MM" }) });

export function clnControlRoutes(sandbox: ClnSandboxControls, adminToken: string): Router {
  const router = express.Router({ caseSensitive: true });
  router.use(tolerantJson());
  router.use((req, res, next) => {
    if (req.get("authorization") !== `Bearer ${adminToken}`) {
      res.status(401).json({ success: false, error: "Unauthorized" });
      return;
    }
    next();
  });

  /** The body through `schema`, or a 422 naming each field. */
  const body = <T extends z.ZodType>(schema: T, req: express.Request, res: express.Response): z.output<T> | undefined => {
    const parsed = schema.safeParse(hadMalformedBody(req) ? undefined : req.body);
    if (parsed.success) return parsed.data;
    res.status(422).json({ message: "Validation error", errors: fieldErrors(parsed.error, "body") });
    return undefined;
  };

  router.get("/ledger", (_req, res) => {
    res.json({ purchases: sandbox.ledger() });
  });
  router.get("/timeline", (_req, res) => {
    res.json({ timeline: sandbox.timeline() });
  });
  router.get("/licenses", (_req, res) => {
    res.json({ licenses: sandbox.licenses() });
  });
  router.get("/requests", (_req, res) => {
    res.json({ requests: sandbox.requests() });
  });
  router.get("/invoice", (req, res) => {
    const parsed = monthSchema.safeParse(req.query);
    if (!parsed.success) {
      res.status(422).json({ message: "Validation error", errors: fieldErrors(parsed.error, "query") });
      return;
    }
    res.json({ month: parsed.data.month, lines: sandbox.invoice(parsed.data.month) });
  });
  router.get("/faults", (_req, res) => {
    res.json({ faults: sandbox.faults() });
  });
  router.post("/faults", (req, res) => {
    const patch = body(faultsPatchSchema, req, res);
    if (patch !== undefined) res.json({ faults: sandbox.setFaults(patch) });
  });
  router.get("/quirks", (_req, res) => {
    res.json({ quirks: sandbox.quirks() });
  });
  router.post("/quirks", (req, res) => {
    const patch = body(quirksPatchSchema, req, res);
    if (patch !== undefined) res.json({ quirks: sandbox.setQuirks(patch) });
  });
  router.post("/next-register-failure", (req, res) => {
    const failure = body(failureSchema, req, res);
    if (failure === undefined) return;
    sandbox.failNextRegister(failure.message);
    res.json({ armed: true });
  });
  router.post("/next-remove-failure", (req, res) => {
    const failure = body(failureSchema, req, res);
    if (failure === undefined) return;
    sandbox.failNextRemove(failure.message);
    res.json({ armed: true });
  });
  router.post("/held-by-another", (req, res) => {
    const holding = body(holdingSchema, req, res);
    if (holding === undefined) return;
    res.json({ held: sandbox.holdByAnother(holding.ip, holding.type) });
  });
  router.post("/check-in", (req, res) => {
    const checkIn = body(checkInSchema, req, res);
    if (checkIn === undefined) return;
    res.json({ checked_in: sandbox.checkIn(checkIn.ip, checkIn.type, checkIn.server_info) });
  });
  router.post("/reset", (_req, res) => {
    sandbox.reset();
    res.json({ reset: true });
  });
  router.use((_req, res) => {
    res.status(404).json({ success: false, error: "Not found" });
  });
  return router;
}
