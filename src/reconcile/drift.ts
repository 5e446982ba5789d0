import type { ServiceBrief } from "../store/store.js";
import type { ProviderName } from "../vocabulary/provider-names.js";
import type { ListSource, Listed } from "./lists.js";
import type { Slot } from "./match.js";

/** What reconcile reports: each difference between the bridge and a provider's list as a drift item, and the rule that finds it. */

export const DRIFT_KINDS = ["missing_upstream", "unknown_locally", "status_differs", "ip_differs", "variant_differs"] as const;
export type DriftKind = (typeof DRIFT_KINDS)[number];

export interface DriftItem {
  kind: DriftKind;
  /** Whose list it was found in: the service's provider, or the provider holding a licence no service accounts for. */
  provider: ProviderName;
  /** The bridge's service, or null for a licence no service accounts for. */
  service_id: string | null;
  /** The IP the bridge has for the service (or the upstream licence's IP for unknown_locally). */
  ip: string;
  type: string;
  /** What the bridge expects: a status, an IP, a variant, or "absent". */
  expected: string;
  /** What the provider has: a status, an IP, a variant, or "absent". */
  actual: string;
  /** Whether `reconcile --fix` repairs it (nothing is bought either way). */
  fixable: boolean;
  /** What the fix does (fixable items) or what a person should do (the rest). */
  fix?: string;
}

/** A drift item after `fix`: `fix` says what was done, or what is left to do and, if a repair failed, why. */
export interface HandledItem extends DriftItem {
  error?: string;
}

/** What a rule found: what the bridge expects and what the provider has. */
export interface Difference {
  expected: string;
  actual: string;
}

/** The repairs `reconcile --fix` can make; none of them buys anything (repair.ts carries them out). */
export type RepairAction = "suspend_upstream" | "record_suspended" | "record_ip" | "record_variant";

/**
 * One kind of difference, whole in one place (as a Bull Board adapter declares what it can do):
 * when it is found, whether `fix` repairs it, the text the item carries, and the repair `fix`
 * makes of an item found fixable.
 */
export interface DriftRule<S> {
  readonly kind: DriftKind;
  /** The difference this rule sees in `subject`, or undefined when it sees none. */
  detect(subject: S): Difference | undefined;
  fixable(subject: S, found: Difference): boolean;
  /** What the fix does, for a fixable item; what a person should do, for the rest. */
  fixText(subject: S, found: Difference): string;
  /** What `fix` does with an item this rule found fixable. */
  readonly repair?: RepairAction;
}

/** What a service's rule looks at: one licence the service stands for, beside the service's others. */
export interface SlotView {
  svc: ServiceBrief;
  slot: Slot;
  /** The service's provider's list: its name in texts, what it shows, what an absent licence means. */
  source: ListSource;
  /** The licence the provider holds for it, if one was found. */
  license: Listed | undefined;
  /** That licence's status, as the bridge names it; undefined when absent or when the list does not say. */
  upstream: string | undefined;
  /** Every slot of the service (a bundle's components), this one among them. */
  service: readonly Slot[];
}

/** A rule about one licence a service stands for. */
export type SlotRule = DriftRule<SlotView>;
/** A rule about a licence of a provider no service accounts for. */
export type UnclaimedRule = DriftRule<Listed>;

/** A repair to make, kept with the drift item it answers. */
export interface Repair {
  item: DriftItem;
  slot: Slot;
  action: RepairAction;
}
