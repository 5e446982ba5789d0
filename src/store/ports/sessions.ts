import type { Role } from "../../vocabulary/roles.js";

/** A console session as stored: never its id, only the SHA-256 of it (the row's key). */
export interface SessionRow {
  operator: string;
  role: Role;
  created_at: number;
  last_seen_at: number;
}

/**
 * Server-side console sessions. The store keeps them; the console decides when one has expired
 * (idle and absolute limits, src/console/session.ts) and deletes it then.
 */
export interface SessionOps {
  create(idSha256: string, session: SessionRow): Promise<void>;
  get(idSha256: string): Promise<SessionRow | undefined>;
  /** The session was used at `at`. */
  touch(idSha256: string, at: number): Promise<void>;
  /** Logout or expiry; true when there was one. */
  delete(idSha256: string): Promise<boolean>;
  /** Ends every session of the operator `name` (a reload changed their tokens or role, or removed them); returns how many. */
  deleteFor(operator: string): Promise<number>;
  /** Deletes every session idle since before `idleBefore` or created before `createdBefore`; returns how many. */
  deleteExpired(idleBefore: number, createdBefore: number): Promise<number>;
}
