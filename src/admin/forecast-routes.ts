import express, { type Router } from "express";
import { z } from "zod";
import { forecastRenewals, type ForecastDeps } from "../renewals/forecast.js";
import { adminAccess, type AdminAccessDeps } from "./permissions.js";
import { queryOf } from "./paging.js";

export const DAYS_RULE = "must be a whole number of days from 1 to 366 (default 7)";
export const forecastQuerySchema = z.strictObject({
  days: z
    .string()
    .regex(/^[1-9][0-9]{0,2}$/, { error: DAYS_RULE })
    .transform(Number)
    .refine((n) => n <= 366, { error: DAYS_RULE })
    .optional()
    .describe(DAYS_RULE),
});

/** `GET /admin/forecast?days=`: the renewals due in the window, their cost, and whether the balance covers them. */
export function forecastRouter(deps: AdminAccessDeps & { forecast: ForecastDeps }): Router {
  const router = express.Router();
  router.use("/admin", ...adminAccess(deps));
  router.get("/admin/forecast", async (req, res) => {
    const q = queryOf(req, res, forecastQuerySchema);
    if (!q) return;
    res.json(await forecastRenewals(deps.forecast, q.days ?? 7));
  });
  return router;
}
