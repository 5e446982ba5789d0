/** The event types a billing panel sends. Kept apart from the schemas (zod) so `license-bridge --help` can list them cheaply. */
export const EVENT_TYPES = [
  "service.created",
  "service.renewed",
  "service.suspended",
  "service.unsuspended",
  "service.terminated",
  "service.ip_changed",
  "service.product_changed",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
