import type { Catalog } from "../../catalog/catalog.js";
import { sameIp } from "../../vocabulary/ip-address.js";
import type { TranslatedEvent } from "../route.js";
import { str } from "./field-maps.js";
import { compact } from "./panel-values.js";
import { catalogueVerdict } from "./catalogue-checks.js";

export interface ServiceChanges {
  /** The delivery id; each event's id is `<delivery>:ip_changed` / `<delivery>:product_changed`. */
  delivery: string;
  /** The service id as the panel sent it. */
  serviceId: unknown;
  oldIp: string | undefined;
  /** The new IP as the panel sent it. */
  newIp: unknown;
  oldProduct: string | undefined;
  /** The new product id as the panel sent it. */
  newProduct: unknown;
  /** For the IP change; the product change is judged on both products. */
  ifUnknownService: "conflict" | "ignore";
}

/**
 * `service.ip_changed` and `service.product_changed`, in that order, from an update hook's old
 * and new values: each only when both values are known and differ.
 */
export function changeEvents(catalog: Catalog, c: ServiceChanges): TranslatedEvent[] {
  const events: TranslatedEvent[] = [];
  const newIp = str(c.newIp);
  if (newIp !== undefined && c.oldIp !== undefined && !sameIp(newIp, c.oldIp)) {
    events.push({
      webhookId: `${c.delivery}:ip_changed`,
      event: { type: "service.ip_changed", service: compact({ id: c.serviceId, ip: c.oldIp }), changes: { ip: c.newIp } },
      ifUnknownService: c.ifUnknownService,
    });
  }
  const newProduct = str(c.newProduct);
  if (newProduct !== undefined && c.oldProduct !== undefined && newProduct !== c.oldProduct) {
    events.push({
      webhookId: `${c.delivery}:product_changed`,
      event: { type: "service.product_changed", service: compact({ id: c.serviceId, product_id: c.oldProduct }), changes: { product_id: c.newProduct } },
      ifUnknownService: catalogueVerdict(catalog, [c.oldProduct, newProduct]) === "not_licence" ? "ignore" : "conflict",
    });
  }
  return events;
}
