/**
 * Who may do what through the admin API, the CLI and the console. Three roles, each allowing
 * everything the one before it does:
 *
 * - viewer: reads (licences, jobs, balance, forecast, audit; reconcile without repairs);
 * - operator: also acts on licences and jobs (retry a job, queue the renewals that are due);
 * - admin: also adoption, reconcile's repairs and the reseller account operations.
 */
export const ROLES = ["viewer", "operator", "admin"] as const;
export type Role = (typeof ROLES)[number];

const RANK: Readonly<Record<Role, number>> = { viewer: 0, operator: 1, admin: 2 };

/** Whether `have` may do what needs `need`. */
export function roleAllows(have: Role, need: Role): boolean {
  return RANK[have] >= RANK[need];
}

/** What each role may do, in the words of the 403 answers and the docs. */
export const ROLE_MEANING: Readonly<Record<Role, string>> = {
  viewer: "reads only",
  operator: "reads, and acts on licences and jobs",
  admin: "everything: also adoption, reconcile's repairs and reseller account operations",
};

/** Who is acting: an operator of OPERATORS_FILE, `admin` (ADMIN_TOKEN), or the CLI's local actor. */
export interface Actor {
  name: string;
  role: Role;
}

/** The name every ADMIN_TOKEN acts under: an operator of OPERATORS_FILE may not take it. */
export const ADMIN_TOKEN_ACTOR = "admin";
