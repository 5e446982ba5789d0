import { defineJob } from "../jobs/define.js";
import { JobFailedError } from "../jobs/errors.js";
import type { LitespeedVariant } from "../vocabulary/products.js";
import { changeCoreOnce } from "./change-core.js";
import type { LifecycleDeps } from "./deps.js";
import { jobChange, mustGet } from "./service-changes.js";
import { CHANGE_PRODUCT } from "../intake/jobs.js";


/** `service.product_changed`: a LiteSpeed core change (intake refuses any other). */
export function changeProductJob(deps: LifecycleDeps) {
  return defineJob(CHANGE_PRODUCT, async (job, ctx) => {
    const { product_id } = job.payload;
    const svc = await mustGet(deps, job);
    const product = deps.catalog.product(product_id);
    if (!product || product.kind !== "licence" || product.type !== "litespeed") {
      throw new JobFailedError(`product ${product_id} is not a LiteSpeed licence in the catalogue any more`);
    }
    if (svc.status === "terminated") throw new JobFailedError("the service is terminated; its product is not changed", "service_terminated");
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
    await deps.store.services.change(
      jobChange(job, svc.service_id, {
        patch: { product_id, variant: to, upstream_variant: upstreamVariant, last_error: null },
        history: [{ action: "product changed", detail: `product ${svc.product_id} → ${product_id}: ${detail}` }],
        outcome: ["applied", null],
      }),
    );
  });
}
