import type { CatalogProduct } from "../catalog/catalog.js";
import { defineJob } from "../jobs/define.js";
import { JobFailedError } from "../jobs/errors.js";
import type { JobContext } from "../jobs/define.js";
import type { LicenceProvider } from "../providers/port.js";
import type { ServicePatch, ServiceRow } from "../store/store.js";
import type { Job } from "../vocabulary/jobs.js";
import { charging, callOnce } from "./call-once.js";
import { changeCoreOnce } from "./change-core.js";
import type { LifecycleDeps } from "./deps.js";
import { buyForChange, finishReplacement, heldPartOf, recordReplacement, replacedLeft } from "./provider-steps.js";
import { jobChange, mustGet } from "./service-changes.js";
import { CHANGE_PRODUCT } from "../intake/jobs.js";

/**
 * `service.product_changed`, by what the service's provider can do (`changeProduct`): the
 * reseller moves a LiteSpeed licence between its cores in place (intake refuses any other
 * change of a reseller product); Manage2 updates the licence's package (XMLpackageUpdate; a
 * refusal blocks the job for the operator, nothing bought); CLN converts an Imunify licence in
 * place where it offers that, and otherwise registers the new type before it removes the old.
 */
export function changeProductJob(deps: LifecycleDeps) {
  return defineJob(CHANGE_PRODUCT, async (job, ctx) => {
    const { product_id } = job.payload;
    const svc = await mustGet(deps, job);
    const product = deps.catalog.product(product_id);
    const provider = deps.providers.providerFor(svc);
    if (provider.capabilities.changeProduct !== "litespeed-core") {
      const isLicence = product?.kind === "licence" && product.provider === provider.name;
      const left = replacedLeft(job);
      if (left) {
        // An earlier attempt registered the new type and recorded the change (the patch again, in
        // case it stopped in between); the old licence is left to remove, and is removed even
        // if the product has left the catalogue since: it is billed.
        const removed = await finishReplacement(deps, provider, job, ctx, left);
        const patch = isLicence ? { ...productPatch(product), upstream_id: null } : {};
        await deps.store.services.change(jobChange(job, svc.service_id, { patch: { ...patch, last_error: null }, history: [{ action: "product changed", detail: `the licence it replaced: ${removed}` }], outcome: ["applied", null] }));
        return;
      }
      if (!isLicence) throw new JobFailedError(`product ${product_id} is not a ${provider.label} licence in the catalogue any more`);
      if (svc.status === "terminated") throw new JobFailedError("the service is terminated; its product is not changed", "service_terminated");
      const detail = await changeAtProvider(deps, provider, job, ctx, svc, product);
      await deps.store.services.change(
        jobChange(job, svc.service_id, {
          patch: { ...productPatch(product), last_error: null, ...detail.patch },
          history: [{ action: "product changed", detail: `product ${svc.product_id} → ${product_id}: ${detail.text}` }],
          outcome: ["applied", null],
        }),
      );
      return;
    }

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
      detail = await changeCoreOnce(provider, job, ctx, svc, from, to);
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

/** Changes the licence at the provider to `product`'s SKU, once; what it did, and what that changes on the row besides the product. */
async function changeAtProvider(
  deps: LifecycleDeps,
  provider: LicenceProvider,
  job: Pick<Job, "id" | "eventId" | "serviceId" | "intent" | "attempts" | "maxAttempts">,
  ctx: JobContext,
  svc: ServiceRow,
  product: Extract<CatalogProduct, { kind: "licence" }>,
): Promise<{ text: string; patch?: ServicePatch }> {
  const [from] = provider.partsOf(svc);
  const [to] = provider.partsOf({ kind: "licence", type: product.type, sku: product.purchase.sku, product_id: product.productId });
  if (!from || !to) throw new JobFailedError(`${provider.label} sells neither product as one licence`);
  if (svc.status === "pending" || svc.status === "failed") return { text: `no licence upstream yet; ${to.type} (${provider.label} ${to.sku}) is bought instead` };
  if (from.sku === to.sku) return { text: `the licence is ${provider.label} ${to.sku} already` };
  if (svc.status === "suspended" && provider.capabilities.suspension !== "native") {
    return { text: `the licence is out of use at ${provider.label} while the service is suspended; it comes back as ${to.sku} when the service is unsuspended` };
  }
  if (provider.changesProductInPlace(from.sku, to.sku)) {
    const r = await callOnce(
      job,
      ctx,
      { op: `change_product:${from.sku}>${to.sku}`, ip: svc.ip },
      async () => {
        const there = await provider.holdingsAt(svc.ip, { skus: [from.sku, to.sku] });
        return there.some((h) => h.sku === to.sku && h.state === "active") && !there.some((h) => h.sku === from.sku && h.state === "active");
      },
      async (beforeSend) => {
        await beforeSend();
        await provider.changeProduct(heldPartOf(svc, from.sku), to);
      },
      // Nothing is bought, but the price of the licence may change: the charging rule and a settle window.
      charging(deps, job, "change"),
    );
    return { text: `${from.sku} → ${to.sku} in place at ${provider.label}${r.confirmedEarlier ? " (confirmed after a lost answer)" : ""}` };
  }
  // A new licence before the old one goes: never a moment without one.
  await buyForChange(deps, provider, job, ctx, svc, svc.ip, to, `service ${svc.service_id}'s change of product`);
  await recordReplacement(deps, provider, job, ctx, [{ ip: svc.ip, sku: from.sku }], {
    patch: { ...productPatch(product), upstream_id: null },
    history: { action: "product changed", detail: `product ${svc.product_id} → ${product.productId}: ${to.sku} registered at ${provider.label}; ${from.sku} at ${svc.ip} is still to be removed` },
  });
  return { text: `${to.sku} registered at ${provider.label}, then ${from.sku} removed`, patch: { upstream_id: null } };
}

/** The service as a licence of `product` (a provider's other SKU); the licence id is the provider's to say. */
function productPatch(product: Extract<CatalogProduct, { kind: "licence" }>): ServicePatch {
  return { product_id: product.productId, type: product.type, sku: product.purchase.sku, variant: null, upstream_variant: null };
}
