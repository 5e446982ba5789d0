import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { DatabaseOpenError } from "../database-errors.js";

export type Db = Database.Database;

export interface OpenDatabaseOptions {
  readonly?: boolean;
  /** Refuse to create the file: a second connection to a database that must be there. (Default: false) */
  fileMustExist?: boolean;
}

/**
 * Opens the SQLite file with every pragma the service relies on, in one place.
 * - WAL: readers (admin API) never block the writer (webhook intake, jobs).
 * - synchronous=NORMAL: commits survive a process crash; the writes that must also survive a
 *   power cut (accepted webhooks, charging intents) are fsynced by the group commit (wal-sync.ts).
 * - temp_store=MEMORY: every delivery and every intent runs in a savepoint of its group commit
 *   (group-commit.ts), and a savepoint keeps a copy of each page it changes in a sub-journal;
 *   in a temporary file that copying costs about as much as the writes themselves.
 * - wal_autocheckpoint=10000 pages (about 40 MB of WAL, instead of SQLite's 1000): a checkpoint
 *   runs inside the commit that crosses the mark, on the event loop, copies every page the WAL
 *   holds into the database file and fsyncs it. The pages every commit rewrites (the tail of
 *   each index) are copied once per checkpoint however often they were written, so ten times
 *   fewer checkpoints copy far fewer pages per commit and stall the event loop ten times less
 *   often (measured with bench:ingest). The WAL file keeps its largest size on disk.
 * - busy_timeout: the CLI and the service may briefly contend for the write lock. The wait
 *   blocks the event loop, so the running service shortens it once started (src/compose/service.ts).
 */
export function openDatabase(path: string, options: OpenDatabaseOptions = {}): Db {
  let db: Db | undefined;
  try {
    if (path !== ":memory:" && !options.readonly) mkdirSync(dirname(path), { recursive: true });
    db = new Database(path, { readonly: options.readonly ?? false, fileMustExist: options.fileMustExist ?? false });
    db.pragma("busy_timeout = 5000");
    if (!options.readonly) {
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      db.pragma("wal_autocheckpoint = 10000");
    }
    db.pragma("foreign_keys = ON");
    db.pragma("temp_store = MEMORY");
    return db;
  } catch (err) {
    db?.close();
    // A lock held elsewhere is not a bad path: the caller may try again.
    if (isDatabaseBusy(err)) throw err;
    throw new DatabaseOpenError(path, err);
  }
}

/** SQLITE_BUSY or SQLITE_LOCKED (or one of their extended codes): another connection holds a lock; try later. */
export function isDatabaseBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"));
}
