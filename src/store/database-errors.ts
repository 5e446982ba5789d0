import { whyNotWritable } from "../config/file-problems.js";

/** The refusals to run on a database: one that cannot be opened, one newer than the code. */

/**
 * The file cannot be opened or created at `path`: a missing or read-only directory, a path under
 * a regular file, a file that is not SQLite. A configuration problem, not a crash.
 */
export class DatabaseOpenError extends Error {
  constructor(
    readonly path: string,
    cause: unknown,
  ) {
    super(`cannot open or create ${path}: ${whyNotWritable(cause)}`, { cause });
    this.name = "DatabaseOpenError";
  }
}

/** The refusal to run code against a database that a newer release has migrated. */
export class DatabaseNewerThanCodeError extends Error {
  constructor(
    readonly databaseVersion: number,
    readonly codeVersion: number,
  ) {
    super(
      `the database is at migration ${databaseVersion} but this code only knows up to ${codeVersion}; ` +
        "run the newer release, or restore a backup taken before the upgrade",
    );
    this.name = "DatabaseNewerThanCodeError";
  }
}
