import { z } from "zod";
import { JobFailedError } from "../jobs/errors.js";
import type { JobHandler } from "../jobs/runner.js";
import type { LitespeedVariant } from "../reseller/vocabulary.js";
import type { LifecycleDeps } from "./deps.js";
import { changeCoreOnce } from "./change-core.js";
import { eventOutcome } from "./record.js";
import { mustGet } from "./targets.js";

const payloadSchema = z.object({ product_id: z.string() });

/** `service.product_changed`: a LiteSpeed core change (intake refuses any other). */
export function changeProductHandler(deps: LifecycleDeps): JobHandler {
  const { services, clock, db, catalog } = deps;
  return async (job, ctx) => {
    const { product_id } = payloadSchema.parse(job.payload);
    const svc = mustGet(deps, job);
    const product = catalog.product(product_id);
    if (!product || product.kind !== "licence" || product.type !== "litespeed") {
      throw new JobFailedError(`product ${product_id} is not a LiteSpeed licence in the catalogue any more`);
    }
    if (svc.status === "terminated") throw new JobFailedError("the service is terminated; its product is not changed");
    const to = (product.variant ?? "litespeed") as LitespeedVariant;
    const from = (svc.upstream_variant ?? "litespeed") as LitespeedVariant;

    let detail: string;
    let upstreamVariant = svc.upstream_variant;
    if (svc.status === "pending" || svc.status === "failed") {
      detail = `no licence upstream yet; will be registered as ${to}`;
    } else if (from === to) {
      detail = `already ${to}`;
    } else {
      detail = await changeCoreOnce(deps, job, ctx, svc.ip, from, to);
      upstreamVariant = to;
    }
    db.transaction(() => {
      services.update(svc.service_id, { product_id, variant: to, upstream_variant: upstreamVariant, last_error: null }, clock.now());
      services.addHistory({
        service_id: svc.service_id,
        at: clock.now(),
        event_id: job.eventId,
        job_id: job.id,
        action: "product changed",
        detail: `product ${svc.product_id} → ${product_id}: ${detail}`,
      });
      eventOutcome(db, job, "applied", null);
    })();
  };
}
