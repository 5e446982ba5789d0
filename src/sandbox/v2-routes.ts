import express, { type Request, type Router } from "express";
import {
  type BillingCycleMonths,
  billingCycleMonthsSchema,
  coreSchema,
  ipSchema,
  type ProductType,
  productTypeSchema,
  VARIANT_BY_CORE,
} from "../vocabulary/products.js";
import { tolerantJson } from "./body.js";
import { apiEntry, type SandboxContext } from "./context.js";
import { isPlainObject } from "./request-log.js";
import { type Outcome } from "./state.js";
import { MAIN_RESELLER_ID } from "../vocabulary/sandbox-identity.js";

interface V2Answer {
  ok: "True" | "False";
  message: string;
}

type Params = Record<string, string | undefined>;

const answer = (ok: boolean, message: string): V2Answer => ({ ok: ok ? "True" : "False", message });
const refuse = (message: string): V2Answer => answer(false, message);

const WRONG_TOKEN = "Wrong token";
const INVALID_IP = "Invalid IP address format";
const INVALID_TYPE = "Invalid license type";

/**
 * The query-string interface (version 2.0). Every answer is HTTP 200 with ok "True"/"False";
 * only the legacy token is accepted and it acts as the main reseller.
 */
export function v2Routes(ctx: SandboxContext): Router {
  const { state } = ctx;
  const router = express.Router({ caseSensitive: true });

  const route = (path: string, op: string, handler: (params: Params) => V2Answer): void => {
    const handle = (req: Request, res: express.Response): void => {
      const params = paramsOf(req);
      const reply = params.token === ctx.tokens.legacy ? handler(params) : refuse(WRONG_TOKEN);
      res.status(200).json(reply);
    };
    const chain = [express.urlencoded({ extended: false }), tolerantJson(), ...apiEntry(ctx, "v2", op, true), handle];
    router.route(path).get(chain).post(chain);
  };

  route("/rc/license.php", "register", (p) =>
    withPurchase(p, (input) => fromOutcome(state.register(MAIN_RESELLER_ID, { ...input, via: "v2" }), "License registered")),
  );

  route("/rc/ReNew.php", "renew", (p) =>
    withPurchase(p, (input) => fromOutcome(state.renew(MAIN_RESELLER_ID, { ...input, via: "v2" }), "License renewed")),
  );

  route("/rc/ChangeIp.php", "change-ip", (p) => {
    const ip = validIp(p.ip);
    if (ip === undefined) return refuse(INVALID_IP);
    const type = validType(p.type);
    if (type === undefined) return refuse(INVALID_TYPE);
    const newip = validIp(p.newip);
    if (newip === undefined) return refuse(INVALID_IP);
    return fromOutcome(state.changeIp(MAIN_RESELLER_ID, { ip, type, newip }), "IP changed");
  });

  route("/ChangeCore.php", "change-core", (p) => {
    const ip = validIp(p.ip);
    if (ip === undefined) return refuse(INVALID_IP);
    const core = coreSchema.safeParse(p.core !== undefined && /^\d+$/.test(p.core) ? Number(p.core) : undefined);
    if (!core.success) return refuse("Invalid core");
    return fromOutcome(state.changeCore(MAIN_RESELLER_ID, { ip, to: VARIANT_BY_CORE[core.data] }), "Core changed");
  });

  return router;
}

function withPurchase(
  p: Params,
  then: (input: { ip: string; type: ProductType; months: BillingCycleMonths }) => V2Answer,
): V2Answer {
  const ip = validIp(p.ip);
  if (ip === undefined) return refuse(INVALID_IP);
  const type = validType(p.type);
  if (type === undefined) return refuse(INVALID_TYPE);
  // Optional in v2; one month when absent.
  const rawCycle = p.billingcycle ?? "1";
  const months = billingCycleMonthsSchema.safeParse(/^\d+$/.test(rawCycle) ? Number(rawCycle) : undefined);
  if (!months.success) return refuse("Invalid billing cycle");
  return then({ ip, type, months: months.data });
}

function fromOutcome<T>(outcome: Outcome<T>, message: string): V2Answer {
  if (outcome.ok) return answer(true, message);
  switch (outcome.failure.kind) {
    case "not_found":
      return refuse("License not found");
    case "insufficient_balance":
      return refuse("Please charge your account");
    case "rejected":
      return refuse(outcome.failure.message);
  }
}

/** The canonical form, as v1 keeps it: a licence registered here as 2001:DB8::0001 is 2001:db8::1 to v1. */
function validIp(value: string | undefined): string | undefined {
  const parsed = ipSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

function validType(value: string | undefined): ProductType | undefined {
  const parsed = productTypeSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/** Query string first (where the interface puts parameters), then a POST body; only single string values count. */
function paramsOf(req: Request): Params {
  const body = isPlainObject(req.body) ? req.body : {};
  const merged: Record<string, unknown> = { ...body, ...(req.query as Record<string, unknown>) };
  const params: Params = {};
  for (const [key, value] of Object.entries(merged)) {
    if (typeof value === "string") params[key] = value;
    else if (typeof value === "number") params[key] = String(value);
  }
  return params;
}
