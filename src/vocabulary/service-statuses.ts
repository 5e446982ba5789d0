/** A service's licence as the bridge keeps it: ordered (pending), bought and in use, suspended, terminated, or failed for good. */
export const SERVICE_STATUSES = ["pending", "active", "suspended", "terminated", "failed"] as const;
export type ServiceStatus = (typeof SERVICE_STATUSES)[number];
