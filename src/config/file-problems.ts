/** Why a file could not be created or opened, in words an operator can act on. */
export function whyNotWritable(err: unknown): string {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  switch (code) {
    case "EEXIST":
    case "ENOTDIR":
      return "a part of the path is a file, not a directory";
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "EROFS":
      return "the file system is read-only";
    case "SQLITE_CANTOPEN":
      return "SQLite cannot open or create the file there";
    case "SQLITE_NOTADB":
      return "the file is not a SQLite database";
    default:
      return typeof message === "string" ? message : String(err);
  }
}

