import type { ServiceStatus } from "../../vocabulary/service-statuses.js";
import type { ServiceRow } from "../service-row.js";
import type { MailRow } from "./mails.js";

/** One day of the overview's chart (UTC days; `day` is the Unix day number). */
export interface DailyActivity {
  day: number;
  orders: number;
  renewals: number;
  failures: number;
}

export interface LicenceSearch {
  /** Exact service id, IP, licence key, or customer e-mail (any case). */
  q?: string;
  status?: ServiceStatus;
  /** Keyset cursor: the last service id of the previous page. */
  after?: string;
  limit: number;
}

export interface ConsoleReadOps {
  /** How many services have each status (a status with none is left out). */
  statusCounts(): Promise<Partial<Record<ServiceStatus, number>>>;
  /** Orders received, renewals bought and jobs that stopped (failed or blocked), per UTC day since `since`. */
  daily(since: number): Promise<DailyActivity[]>;
  /** Licences in service id order, matching the search. */
  searchLicences(search: LicenceSearch): Promise<ServiceRow[]>;
  /** A service's mails, newest first. */
  mailsOf(serviceId: string, limit: number): Promise<MailRow[]>;
}
