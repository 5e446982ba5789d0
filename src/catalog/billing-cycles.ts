/** The billing panel's cycle names (service-contract.md section 2). Kept apart from the catalogue (zod) so `license-bridge --help` can list them cheaply. */
export const BILLING_CYCLES = ["monthly", "quarterly", "semiannually", "annually", "biennially", "triennially"] as const;
export type BillingCycle = (typeof BILLING_CYCLES)[number];
