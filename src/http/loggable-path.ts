/** Paths whose last segment is a credential (Blesta's webhook has no signature of its own). */
const CREDENTIAL_IN_PATH = /^(\/webhooks\/blesta\/)[^/?#]+/;

/**
 * The request's path as it may be logged: no query string, and no credential that a panel
 * had to put into the URL. Every log line that names a path goes through here.
 */
export function loggablePath(originalUrl: string): string {
  return originalUrl.split("?", 1)[0]!.replace(CREDENTIAL_IN_PATH, "$1[token]");
}
