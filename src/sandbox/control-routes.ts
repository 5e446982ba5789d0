import express, { type Router } from "express";
import { z } from "zod";
import { fieldErrors } from "../validation/field-errors.js";
import { hadMalformedBody, tolerantJson } from "./body.js";
import type { SandboxContext } from "./context.js";
import { faultsPatchSchema } from "./faults.js";
import { MAIN_RESELLER_ID } from "../vocabulary/sandbox-identity.js";

const balanceSchema = z.strictObject({ balance: z.number().finite().min(0) });

/**
 * /_sandbox: lets a test in another process inspect and steer the sandbox. Admin token only;
 * never recorded, never delayed or failed by the faults it configures.
 */
export function controlRoutes(ctx: SandboxContext): Router {
  const router = express.Router({ caseSensitive: true });
  router.use(tolerantJson());
  router.use((req, res, next) => {
    if (req.get("authorization") !== `Bearer ${ctx.tokens.admin}`) {
      res.status(401).json({ success: false, error: "Unauthorized" });
      return;
    }
    next();
  });

  router.get("/ledger", (_req, res) => {
    res.json({ charges: ctx.state.charges(MAIN_RESELLER_ID) });
  });
  router.get("/requests", (_req, res) => {
    res.json({ requests: ctx.requests.all() });
  });
  router.get("/licenses", (_req, res) => {
    res.json({ licenses: ctx.state.licenses(MAIN_RESELLER_ID) });
  });
  router.get("/faults", (_req, res) => {
    res.json({ faults: ctx.faults.current() });
  });
  router.post("/faults", (req, res) => {
    const parsed = faultsPatchSchema.safeParse(hadMalformedBody(req) ? undefined : req.body);
    if (!parsed.success) {
      res.status(422).json(validationError(parsed.error));
      return;
    }
    res.json({ faults: ctx.faults.set(parsed.data) });
  });
  router.get("/balance", (_req, res) => {
    res.json({ balance: ctx.state.balance(MAIN_RESELLER_ID) });
  });
  router.post("/balance", (req, res) => {
    const parsed = balanceSchema.safeParse(hadMalformedBody(req) ? undefined : req.body);
    if (!parsed.success) {
      res.status(422).json(validationError(parsed.error));
      return;
    }
    ctx.state.setBalance(MAIN_RESELLER_ID, parsed.data.balance);
    res.json({ balance: ctx.state.balance(MAIN_RESELLER_ID) });
  });
  router.post("/reset", (_req, res) => {
    ctx.reset();
    res.json({ reset: true });
  });
  router.use((_req, res) => {
    res.status(404).json({ success: false, error: "Not found" });
  });
  return router;
}

function validationError(error: z.ZodError): { message: string; errors: Record<string, string[]> } {
  const errors = fieldErrors(error, "body");
  return { message: "Validation error", errors };
}
