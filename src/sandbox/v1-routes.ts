import express, { type Request, type Router } from "express";
import { hadMalformedBody, tolerantJson } from "./body.js";
import { apiEntry, type SandboxContext } from "./context.js";
import { type Account, ADMIN_ACCOUNT_ID, type LicenseStatus, type Outcome } from "./state.js";
import {
  billingCycle,
  bundleId,
  emailAddress,
  exactly,
  type Field,
  type FieldErrors,
  ipAddress,
  litespeedVariant,
  numberAtLeast,
  numberBetween,
  optional,
  type Parsed,
  parseFields,
  password,
  positiveAmount,
  productType,
  text,
} from "./v1-validation.js";
import { MAIN_RESELLER_ID } from "../vocabulary/sandbox-identity.js";

interface Reply {
  status: number;
  body: unknown;
}

type Handler = (req: Request, caller: Account) => Reply;

const UNAUTHORIZED: Reply = { status: 401, body: { success: false, error: "Unauthorized" } };
const FORBIDDEN: Reply = { status: 403, body: { success: false, error: "Forbidden" } };
const NOT_FOUND: Reply = { status: 404, body: { success: false, error: "Not found" } };
const INSUFFICIENT_BALANCE: Reply = { status: 400, body: { success: false, error: "Insufficient balance" } };

const success = (message: string, data: unknown): Reply => ({ status: 200, body: { success: true, message, data } });
const invalid = (errors: FieldErrors): Reply => ({ status: 422, body: { message: "Validation error", errors } });

/** The JSON interface under /api/v1. Checks run auth → validation → existence → balance → commit. */
export function v1Routes(ctx: SandboxContext): Router {
  const { state } = ctx;
  const router = express.Router({ caseSensitive: true });
  router.use(tolerantJson());

  const route = (
    method: "get" | "post",
    path: string,
    op: string,
    options: { mutating: boolean; adminOnly?: boolean },
    handler: Handler,
  ): void => {
    router[method](path, ...apiEntry(ctx, "v1", op, options.mutating), (req, res) => {
      const caller = authenticate(ctx, req);
      const reply = !caller
        ? UNAUTHORIZED
        : options.adminOnly === true && caller.role !== "admin"
          ? FORBIDDEN
          : handler(req, caller);
      res.status(reply.status).json(reply.body);
    });
  };

  const licenseKey = { ip: ipAddress, type: productType };
  const purchase = { ip: ipAddress, type: productType, billingcycle: billingCycle };

  route("get", "/license/list", "list", { mutating: false }, (_req, caller) =>
    success("Licenses retrieved", state.licenses(caller.id)),
  );

  route("get", "/license/install-command", "install-command", { mutating: false }, (req, caller) =>
    withInput(req, req.query, licenseKey, ({ ip, type }) => {
      const license = state.license(caller.id, ip, type);
      if (!license) return NOT_FOUND;
      const command = `bash <(curl -fsSL https://sandbox.invalid/install/${type}.sh) --ip ${ip} --key ${license.key}`;
      return success("Install command generated", { command });
    }),
  );

  route("post", "/license/register", "register", { mutating: true }, (req, caller) =>
    withInput(req, req.body, purchase, ({ ip, type, billingcycle }) =>
      fromOutcome(state.register(caller.id, { ip, type, months: billingcycle, via: "v1" }), "License registered successfully"),
    ),
  );

  route("post", "/license/renew", "renew", { mutating: true }, (req, caller) =>
    withInput(req, req.body, purchase, ({ ip, type, billingcycle }) =>
      fromOutcome(state.renew(caller.id, { ip, type, months: billingcycle, via: "v1" }), "License renewed successfully"),
    ),
  );

  const statusRoute = (op: string, status: LicenseStatus, message: string): void =>
    route("post", `/license/${op}`, op, { mutating: true }, (req, caller) =>
      withInput(req, req.body, licenseKey, ({ ip, type }) => fromOutcome(state.setStatus(caller.id, ip, type, status), message)),
    );
  statusRoute("suspend", "suspended", "License suspended successfully");
  statusRoute("unsuspend", "active", "License unsuspended successfully");

  route("post", "/license/change-ip", "change-ip", { mutating: true }, (req, caller) =>
    withInput(req, req.body, { ip: ipAddress, newip: ipAddress, type: productType }, (input) =>
      fromOutcome(state.changeIp(caller.id, input), "License IP changed successfully"),
    ),
  );

  route("post", "/license/change-core", "change-core", { mutating: true }, (req, caller) =>
    withInput(req, req.body, { ip: ipAddress, old_type: litespeedVariant, new_type: litespeedVariant }, (input) =>
      fromOutcome(
        state.changeCore(caller.id, { ip: input.ip, from: input.old_type, to: input.new_type }),
        "License core changed successfully",
      ),
    ),
  );

  route("post", "/bundles", "bundle-register", { mutating: true }, (req, caller) =>
    withInput(req, req.body, { ip: ipAddress, bundle: bundleId, billingcycle: billingCycle }, ({ ip, bundle, billingcycle }) =>
      fromOutcome(state.registerBundle(caller.id, { ip, bundle, months: billingcycle, via: "v1" }), "Bundle registered successfully"),
    ),
  );

  route("post", "/bundles/status", "bundle-status", { mutating: false }, (req, caller) =>
    withInput(req, req.body, { bundle_key: text }, ({ bundle_key }) =>
      fromOutcome(state.bundleStatus(caller.id, bundle_key), "Bundle status retrieved"),
    ),
  );

  route("get", "/sub-reseller", "sub-reseller-list", { mutating: false }, (_req, caller) =>
    success("Sub-resellers retrieved", state.subResellers(caller.id)),
  );

  route("post", "/sub-reseller", "sub-reseller-create", { mutating: true }, (req, caller) =>
    withInput(
      req,
      req.body,
      {
        name: text,
        email: emailAddress,
        password,
        role: exactly("sub_reseller"),
        commission_rate: numberBetween(0, 100),
      },
      // The password is checked and forgotten: the sandbox never logs anyone in with it.
      ({ name, email, commission_rate }) =>
        fromOutcome(state.createSubReseller(caller.id, { name, email, commission_rate }), "Sub-reseller created successfully"),
    ),
  );

  route("post", "/sub-reseller/:id/credit", "sub-reseller-credit", { mutating: true }, (req, caller) =>
    withInput(req, req.body, { amount: positiveAmount }, ({ amount }) => {
      const id = accountIdParam(req);
      if (id === undefined) return NOT_FOUND;
      return fromOutcome(state.creditSubReseller(caller.id, id, amount), "Sub-reseller credited successfully");
    }),
  );

  route("post", "/admin/reseller", "admin-reseller-create", { mutating: true, adminOnly: true }, (req) =>
    withInput(
      req,
      req.body,
      {
        name: text,
        email: emailAddress,
        password,
        role: exactly("reseller"),
        balance: numberAtLeast(0),
        domain: text,
        commission: numberAtLeast(0),
      },
      ({ name, email, balance, domain, commission }) =>
        fromOutcome(state.createReseller({ name, email, balance, domain, commission }), "Reseller created successfully"),
    ),
  );

  route("get", "/admin/reseller/:id/balance", "admin-reseller-balance", { mutating: false, adminOnly: true }, (req) => {
    const id = accountIdParam(req);
    if (id === undefined) return NOT_FOUND;
    return fromOutcome(state.resellerBalance(id), "Reseller balance retrieved");
  });

  route("post", "/admin/reseller/:id/credit", "admin-reseller-credit", { mutating: true, adminOnly: true }, (req) =>
    withInput(req, req.body, { amount: positiveAmount, description: optional(text) }, ({ amount }) => {
      const id = accountIdParam(req);
      if (id === undefined) return NOT_FOUND;
      return fromOutcome(state.creditReseller(id, amount), "Reseller credited successfully");
    }),
  );

  // Unknown routes (and known paths with the wrong method) still count as calls that reached the upstream.
  router.use(...apiEntry(ctx, "v1", "unknown", false), (_req, res) => {
    res.status(NOT_FOUND.status).json(NOT_FOUND.body);
  });

  return router;
}

function authenticate(ctx: SandboxContext, req: Request): Account | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.get("authorization") ?? "");
  const token = match?.[1];
  if (token === undefined) return undefined;
  if (token === ctx.tokens.admin) return ctx.state.account(ADMIN_ACCOUNT_ID);
  if (token === ctx.tokens.reseller) return ctx.state.account(MAIN_RESELLER_ID);
  return ctx.state.accountByToken(token);
}

function withInput<S extends Record<string, Field<unknown>>>(
  req: Request,
  source: unknown,
  spec: S,
  then: (input: Parsed<S>) => Reply,
): Reply {
  if (hadMalformedBody(req)) return invalid({ body: ["The request body must be a valid JSON object."] });
  const parsed = parseFields(source, spec);
  return parsed.ok ? then(parsed.value) : invalid(parsed.errors);
}

function fromOutcome<T>(outcome: Outcome<T>, message: string): Reply {
  if (outcome.ok) return success(message, outcome.value);
  const { failure } = outcome;
  switch (failure.kind) {
    case "not_found":
      return NOT_FOUND;
    case "insufficient_balance":
      return INSUFFICIENT_BALANCE;
    case "rejected":
      return invalid({ [failure.field]: [failure.message] });
  }
}

function accountIdParam(req: Request): number | undefined {
  const raw = req.params.id;
  return typeof raw === "string" && /^\d{1,9}$/.test(raw) ? Number(raw) : undefined;
}
