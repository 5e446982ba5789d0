import type { SlotRule, SlotView } from "../drift.js";
import { canonicalIp } from "../listed.js";

/**
 * The service's provider holds its licence at another IP (found by its licence id, by its bundle
 * key, or as the only candidate). The new IP is recorded; a bundle moves as one, so only when
 * every component is at the same one.
 *
 * Not drift: a suspended service whose licence, found by the id the service records, is out of
 * use at a provider that suspends by expiry or removal. A change of IP while it was suspended was
 * recorded on the service and is applied when it is unsuspended, which brings that licence back
 * by its id and moves it there (lifecycle/change-ip.ts); recording the old IP would undo the move.
 */
export const ipDiffers: SlotRule = {
  kind: "ip_differs",
  // A failed service's licence is drift of its own (status-differs.ts), wherever it is.
  detect: ({ svc, slot, license, source }) =>
    license && svc.status !== "failed" && slot.how !== "ip" && !movesAtUnsuspension(svc.status, slot, source) ? { expected: svc.ip, actual: license.ip } : undefined,
  fixable: (view) => movedTogether(view),
  fixText: (view) =>
    movedTogether(view)
      ? `record ${view.license!.ip} as the service's IP (${view.source.label}'s licence is there)`
      : `the licences of this bundle are at different IPs upstream (${[...new Set(found(view).map((s) => s.license!.ip))].join(", ")}): change-ip them at ${view.source.label}, then run reconcile again`,
  repair: "record_ip",
};

const found = ({ service }: SlotView) => service.filter((s) => s.license);

const movesAtUnsuspension = (status: string, slot: SlotView["slot"], source: SlotView["source"]) =>
  status === "suspended" && slot.how === "upstream_id" && source.suspension !== "native";

/** Every licence of the service was found, all at one IP. */
function movedTogether(view: SlotView): boolean {
  const held = found(view);
  return held.length === view.service.length && new Set(held.map((s) => canonicalIp(s.license!.ip))).size === 1;
}
