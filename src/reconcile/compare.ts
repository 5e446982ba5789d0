import type { DriftItem, Repair, SlotView } from "./drift.js";
import { upstreamStatus } from "./listed.js";
import { providerOfListed, RESELLER_SOURCE, type ListSource, type Listed } from "./lists.js";
import { providerOfService, type Slot } from "./match.js";
import { SLOT_RULES, UNCLAIMED_RULES } from "./rules/table.js";

/** Comparing the pairs match() made: each rule of rules/table.ts asked of each, in the table's order. */

/** Each service's slots, in the order match() made them: it lists a service's slots together. */
export function* slotsByService(slots: readonly Slot[]): Generator<Slot[]> {
  for (let i = 0; i < slots.length; ) {
    let j = i + 1;
    while (j < slots.length && slots[j]!.svc === slots[i]!.svc) j++;
    yield slots.slice(i, j);
    i = j;
  }
}

export function countServices(slots: readonly Slot[]): number {
  let n = 0;
  for (let i = 0; i < slots.length; i++) if (i === 0 || slots[i]!.svc !== slots[i - 1]!.svc) n++;
  return n;
}

/** How each provider's list is read; the reseller's as it always was where none is given (one list alone). */
export type SourceOf = (provider: ReturnType<typeof providerOfService>) => ListSource;
const resellerOnly: SourceOf = () => RESELLER_SOURCE;

/** What the rules see of one of `service`'s slots. */
export function viewOf(slot: Slot, service: readonly Slot[], source: ListSource = RESELLER_SOURCE): SlotView {
  const license = slot.license;
  return { svc: slot.svc, slot, source, license, upstream: license && upstreamStatus(license), service };
}

/** The drift of one service's licences; the repairs `fix` would make are added to `repairs`. */
export function compareService(service: Slot[], repairs: Repair[], sourceOf: SourceOf = resellerOnly): DriftItem[] {
  const svc = service[0]!.svc;
  if (svc.status === "pending") return []; // a registration in flight may or may not have bought it yet
  const provider = providerOfService(svc);
  const source = sourceOf(provider);
  const items: DriftItem[] = [];
  for (const slot of service) {
    const view = viewOf(slot, service, source);
    for (const rule of SLOT_RULES) {
      const found = rule.detect(view);
      if (!found) continue;
      const fixable = rule.fixable(view, found);
      const item: DriftItem = { service_id: svc.service_id, ip: svc.ip, kind: rule.kind, provider, type: slot.type, ...found, fixable, fix: rule.fixText(view, found) };
      items.push(item);
      if (fixable && rule.repair) repairs.push({ item, slot, action: rule.repair });
    }
  }
  return items;
}

/** The drift of the providers' licences no service accounts for. */
export function compareUnclaimed(licenses: readonly Listed[]): DriftItem[] {
  const items: DriftItem[] = [];
  for (const l of licenses) {
    for (const rule of UNCLAIMED_RULES) {
      const found = rule.detect(l);
      if (found) items.push({ kind: rule.kind, provider: providerOfListed(l), service_id: null, ip: l.ip, type: l.type, ...found, fixable: rule.fixable(l, found), fix: rule.fixText(l, found) });
    }
  }
  return items;
}
