import { defineJob } from "../jobs/define.js";
import { JobFailedError } from "../jobs/errors.js";
import { changeCoreOnce } from "./change-core.js";
import type { LifecycleDeps } from "./deps.js";
import { jobChange, mustGet } from "./service-changes.js";
import { CHANGE_PRODUCT } from "../intake/jobs.js";


/**
 * `service.product_changed`: a change of variant the provider makes in place, a LiteSpeed
 * licence's cores (intake refuses any other).
 */
export function changeProductJob(deps: LifecycleDeps) {
  return defineJob(CHANGE_PRODUCT, async (job, ctx) => {
    const { product_id } = job.payload;
    const svc = await mustGet(deps, job);
    const product = deps.catalog.product(product_id);
    const provider = deps.providers.providerFor(svc);
    const to = product ? provider.variantOf(product) : undefined;
    const registered = product ? provider.registeredVariant(product) : undefined;
    if (!product || to === undefined || registered === undefined) {
      throw new JobFailedError(`product ${product_id} is not a LiteSpeed licence in the catalogue any more`);
    }
    if (svc.status === "terminated") throw new JobFailedError("the service is terminated; its product is not changed", "service_terminated");
    const from = svc.upstream_variant ?? registered;

    let detail: string;
    let upstreamVariant = svc.upstream_variant;
    if (svc.status === "pending" || svc.status === "failed") {
      detail = `no licence upstream yet; will be registered as ${to}`;
    } else if (from === to) {
      detail = `already ${to}`;
    } else {
      detail = await changeCoreOnce(provider, job, ctx, svc.ip, from, to);
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
