import express, { type Router } from "express";
import { z } from "zod";
import { fieldErrors } from "../../validation/field-errors.js";
import { hadMalformedBody, tolerantJson } from "../body.js";
import { faultsPatchSchema } from "../faults.js";
import { MANAGE2_FUNCTIONS, type Manage2Context } from "./context.js";

const fnSchema = z.enum(MANAGE2_FUNCTIONS).optional();
const nextAnswerSchema = z.union([
  z.strictObject({ fn: fnSchema, refuse: z.string().min(1), status: z.union([z.literal(0), z.literal(-1)]).optional() }),
  z.strictObject({ fn: fnSchema, http: z.number().int().min(100).max(599), body: z.string().optional(), contentType: z.string().optional() }),
  z.strictObject({ fn: fnSchema, garble: z.literal(true) }),
  z.strictObject({ fn: z.literal("XMLlicenseExpire"), notExpired: z.literal(true) }),
]);
const dialectPatchSchema = z.strictObject({
  numbers: z.enum(["numbers", "documented", "strings"]).optional(),
  packages: z.enum(["array", "object"]).optional(),
  emptyLicenses: z.enum(["object", "array", "missing"]).optional(),
  lookupNone: z.enum(["missing", "status0"]).optional(),
  transferStatus: z.union([z.literal(0), z.literal(1)]).optional(),
  duplicateAdd: z.enum(["refuse", "existing"]).optional(),
  packageUpdate: z.enum(["allow", "refuse"]).optional(),
  reactivationFee: z.enum(["after-invoice", "always", "never"]).optional(),
});
const suspendSchema = z.strictObject({ licenseid: z.number().int().positive() });

/**
 * /_sandbox of the Manage2 sandbox: lets a test in another process inspect and steer it, as the
 * reseller sandbox's does. Bearer admin token only; never recorded, never delayed or failed by
 * the faults it configures.
 */
export function manage2ControlRoutes(ctx: Manage2Context): Router {
  const router = express.Router({ caseSensitive: true });
  router.use(tolerantJson());
  router.use((req, res, next) => {
    if (req.get("authorization") !== `Bearer ${ctx.adminToken}`) {
      res.status(401).json({ error: "Unauthorized" });
      return;
    }
    next();
  });

  router.get("/ledger", (_req, res) => void res.json({ charges: ctx.state.ledger() }));
  router.get("/timeline", (_req, res) => void res.json({ events: ctx.state.timeline() }));
  router.get("/licenses", (_req, res) => void res.json({ licenses: ctx.state.licenses() }));
  router.get("/requests", (_req, res) => void res.json({ requests: ctx.requests.all() }));
  router.get("/faults", (_req, res) => void res.json({ faults: ctx.faults.current() }));
  router.get("/dialect", (_req, res) => void res.json({ dialect: ctx.dialect() }));
  router.get("/invoice", (req, res) => {
    const at = typeof req.query.at === "string" ? req.query.at : undefined;
    if (at !== undefined && Number.isNaN(Date.parse(at))) {
      res.status(422).json({ error: "Validation error", errors: { at: ["must be an ISO time"] } });
      return;
    }
    res.json(ctx.invoice(at));
  });

  /** A POST whose JSON body `schema` checks (422 naming the field); `apply` answers, or says the thing asked for is not there. */
  const patch = <T extends z.ZodType>(path: string, schema: T, apply: (value: z.output<T>) => object | { notFound: string }): void => {
    router.post(path, (req, res) => {
      const parsed = schema.safeParse(hadMalformedBody(req) ? undefined : req.body);
      if (!parsed.success) {
        res.status(422).json({ error: "Validation error", errors: fieldErrors(parsed.error, "body") });
        return;
      }
      const answer = apply(parsed.data);
      if ("notFound" in answer) res.status(404).json({ error: answer.notFound });
      else res.json(answer);
    });
  };
  patch("/faults", faultsPatchSchema, (f) => ({ faults: ctx.faults.set(f) }));
  patch("/dialect", dialectPatchSchema, (d) => ({ dialect: ctx.setDialect(d) }));
  patch("/next", nextAnswerSchema, (next) => {
    ctx.queueAnswer(next);
    return { queued: true };
  });
  patch("/suspend", suspendSchema, ({ licenseid }) => {
    const result = ctx.state.suspendByCpanel(licenseid);
    return result.ok ? { license: result.value } : { notFound: result.reason };
  });
  router.post("/reset", (_req, res) => {
    ctx.reset();
    res.json({ reset: true });
  });
  router.use((_req, res) => {
    res.status(404).json({ error: "Not found" });
  });
  return router;
}
