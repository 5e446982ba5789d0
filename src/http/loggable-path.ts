/**
 * Paths whose last segment is a credential (Blesta's webhook has no signature of its own). Any
 * letter case: Express routes paths case-insensitively, so `/Webhooks/Blesta/<token>` reaches
 * the same route with the same token.
 */
const CREDENTIAL_IN_PATH = /^(\/webhooks\/blesta\/)[^/?#]+/i;

/** `http://host:port` in front of the path of an absolute-form request target, which Express also routes. */
const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

/**
 * The request's path as it may be logged: no query string, and no credential that a panel
 * had to put into the URL. Every log line that names a path goes through here.
 */
export function loggablePath(originalUrl: string): string {
  return originalUrl.split("?", 1)[0]!.replace(ABSOLUTE_FORM, "").replace(CREDENTIAL_IN_PATH, "$1[token]");
}
