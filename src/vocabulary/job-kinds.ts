/** Job kinds of the licence lifecycle; one handler each. */
export const JOB_KINDS = {
  register: "register",
  suspend: "suspend",
  unsuspend: "unsuspend",
  terminate: "terminate",
  changeIp: "change_ip",
  changeProduct: "change_product",
  recordPayment: "record_payment",
  renew: "renew",
  /** Reconcile's repair: suspend upstream a licence the bridge has suspended or terminated, in the service's order. */
  enforceSuspension: "enforce_suspension",
  installMail: "mail_install",
} as const;
export type JobKind = (typeof JOB_KINDS)[keyof typeof JOB_KINDS];

/** One service's lifecycle jobs share this queue key, so they run in arrival order. */
export function serviceQueueKey(serviceId: string): string {
  return `svc:${serviceId}`;
}
