import type { ServiceStatus } from "../../vocabulary/service-statuses.js";
import type { MailRow } from "./mails.js";

/** One day of the overview's chart (UTC days; `day` is the Unix day number). */
export interface DailyActivity {
  day: number;
  orders: number;
  renewals: number;
  failures: number;
}

export interface ConsoleReadOps {
  /** How many services have each status (a status with none is left out). */
  statusCounts(): Promise<Partial<Record<ServiceStatus, number>>>;
  /** Orders received, renewals bought and jobs that stopped (failed or blocked), per UTC day since `since`. */
  daily(since: number): Promise<DailyActivity[]>;
  /** A service's mails, newest first. */
  mailsOf(serviceId: string, limit: number): Promise<MailRow[]>;
}
