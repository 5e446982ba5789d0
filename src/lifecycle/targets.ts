import type { ProductType } from "../reseller/vocabulary.js";
import type { ServiceRow } from "../store/services.js";
import { bundleComponents } from "./upstream.js";

/** The upstream licences a service stands for: its own, or its bundle's components. */
export function licenceTypes(svc: ServiceRow): ProductType[] {
  return svc.kind === "bundle" ? bundleComponents(svc.bundle ?? "") : [svc.type as ProductType];
}
