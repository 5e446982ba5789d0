/**
 * The request's path as it may be logged. Blesta signs nothing, so its webhook URL ends in the
 * credential (`/webhooks/blesta/<token>`), and every spelling of that URL reaches the log line
 * of its request, the ones that miss the route (404) included: `//webhooks/...` from a base URL
 * with a trailing slash, dot segments, `%2F`, backslashes, `;parameters`, an absolute-form
 * target, an over-encoded token. Express routes the raw path, so it leaves all of these alone;
 * a proxy in front may not. So the path is read here the way the most lenient of them would
 * read it (percent-decoded again and again, `\` as `/`, `.` and `..`, `;` parameters, any
 * letter case), and every segment that comes after a `blesta` segment is masked, wherever it
 * is and whatever follows. The raw spelling stays otherwise: it is what an operator needs to
 * see why a panel's request missed.
 *
 * The second net: a segment that holds a configured secret (in any encoding or letter case)
 * is masked wherever it is, and the whole path when a secret spans segments. The third: tokens
 * known only by their SHA-256 (OPERATORS_FILE's) are looked for by hashing, so a segment that
 * is one of them, decoded as above, is masked, and the whole path when a run of segments is
 * (a base64 token has slashes in it). A hash finds only the whole token in its exact letter
 * case; nothing shorter than a segment.
 */

import { createHash } from "node:crypto";

const TOKEN_MASK = "[token]";
const SECRET_MASK = "[redacted]";

/** Shorter configured values would mask ordinary words of a path; every secret setting is longer. */
const MIN_SECRET_LENGTH = 8;

/** SHA-256 (hex, lower case) of tokens known only by their hash: OPERATORS_FILE's. */
export type TokenDigests = ReadonlySet<string>;
const NO_DIGESTS: TokenDigests = new Set();

/** The most segments a token known by its hash may span: a slash is one base64 character in 64. */
const MAX_TOKEN_SEGMENTS = 8;
/**
 * Paths of more segments are not hashed run by run (that would be a few hundred hashes per
 * request a client could ask for) but masked whole: no route of ours has a tenth of that.
 */
const MAX_HASHED_SEGMENTS = 64;

/** A proxy may decode once more than the one before it; four rounds undo `%252525xx`. */
const DECODE_ROUNDS = 4;

/** `scheme://authority` (userinfo included) in front of an absolute-form request target, which Express routes too. */
const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/\\?#]*/i;

const SEPARATORS = /[/\\]/;

/** Percent-decoded until nothing changes; a malformed escape stays as it is, invalid UTF-8 reads as Latin-1. */
export function decodedFully(s: string): string {
  let out = s;
  for (let round = 0; round < DECODE_ROUNDS && out.includes("%"); round++) {
    const next = out.replace(/(?:%[0-9a-f]{2})+/gi, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run.replace(/%([0-9a-f]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
      }
    });
    if (next === out) break;
    out = next;
  }
  return out;
}

/** A decoded piece of a segment as a lenient router reads it: compatibility forms folded, any letter case. */
const folded = (piece: string) => piece.normalize("NFKC").trim().toLowerCase();
const isBlesta = (piece: string) => folded(piece) === "blesta";
/** `blesta;v=1` is `blesta` to a router that drops path parameters. */
const namesBlesta = (piece: string) => isBlesta(piece.split(";", 1)[0]!);
const isDotSegment = (piece: string) => piece === "." || piece === "..";

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

/** One of `texts` is, as a whole, a token whose digest is in `digests`. */
function isHashedToken(texts: Iterable<string>, digests: TokenDigests): boolean {
  for (const t of texts) if (t !== "" && digests.has(sha256(t))) return true;
  return false;
}

/** What a lenient router could make of one raw segment: itself, decoded, without `;parameters`, cut at decoded slashes. */
function readingsOf(raw: string): Set<string> {
  const decoded = decodedFully(raw);
  const out = new Set([raw, decoded, raw.split(";", 1)[0]!, decoded.split(";", 1)[0]!]);
  for (const piece of decoded.split(SEPARATORS)) out.add(piece).add(piece.split(";", 1)[0]!);
  return out;
}

/** The decoded pieces of a path, each without its `;parameters`, joined in runs of 2 to MAX_TOKEN_SEGMENTS. */
function* runsOf(pieces: readonly string[]): Generator<string> {
  for (let start = 0; start < pieces.length; start++) {
    for (let end = start + 2; end <= Math.min(pieces.length, start + MAX_TOKEN_SEGMENTS); end++) yield pieces.slice(start, end).join("/");
  }
}

function holdsSecret(text: string, secrets: readonly string[]): boolean {
  if (secrets.length === 0) return false;
  const lower = text.toLowerCase();
  const flat = decodedFully(text).toLowerCase();
  return secrets.some((s) => lower.includes(s) || flat.includes(s));
}

/**
 * The path of `target` (a request's originalUrl) for a log line: no query string or fragment,
 * no scheme and authority, nothing after a `blesta` segment, nothing that holds one of `secrets`
 * or is a token of `digests`.
 */
export function loggablePath(target: string, secrets: readonly string[] = [], digests: TokenDigests = NO_DIGESTS): string {
  const known = secrets.filter((s) => s.length >= MIN_SECRET_LENGTH).map((s) => s.toLowerCase());
  const path = target.replace(ABSOLUTE_FORM, "").split(/[?#]/, 1)[0]!;
  // Segments at even indexes, the separators between them at odd ones.
  const parts = path.split(/([/\\])/);
  let afterBlesta = false;
  for (let i = 0; i < parts.length; i += 2) {
    const raw = parts[i]!;
    if (raw === "") continue;
    const pieces = decodedFully(raw).split(SEPARATORS);
    if (afterBlesta) {
      // `..` and `blesta` say nothing of the token, and show how the request missed the route.
      if (!pieces.every((p) => isDotSegment(p) || isBlesta(p))) parts[i] = TOKEN_MASK;
      continue;
    }
    const at = pieces.findIndex(namesBlesta);
    if (at >= 0) {
      afterBlesta = true;
      // `blesta;<x>` or `blesta%2F<token>`: the segment itself carries more than the name.
      const carriesMore = !isBlesta(pieces[at]!) || pieces.slice(at + 1).some((p) => p !== "" && !isDotSegment(p) && !isBlesta(p));
      if (carriesMore) {
        parts[i] = TOKEN_MASK;
        continue;
      }
    }
    if (holdsSecret(raw, known) || (digests.size > 0 && isHashedToken(readingsOf(raw), digests))) parts[i] = SECRET_MASK;
  }
  const logged = parts.join("");
  // A secret with a slash in it spans segments: then no part of the path is worth the risk.
  if (holdsSecret(logged, known)) return SECRET_MASK;
  if (digests.size > 0) {
    const pieces = decodedFully(logged)
      .split(SEPARATORS)
      .map((p) => p.split(";", 1)[0]!);
    // As written (a token may begin or end with a slash, or hold two), and as a router that merges `//` reads it.
    const merged = pieces.filter((p) => p !== "");
    if (pieces.length > MAX_HASHED_SEGMENTS || isHashedToken(runsOf(pieces), digests)) return SECRET_MASK;
    if (merged.length < pieces.length && isHashedToken(runsOf(merged), digests)) return SECRET_MASK;
  }
  return logged;
}

/** `value` unless it holds one of `secrets` or is a token of `digests` (a client put a secret where an id belongs). */
export function withoutSecrets(value: string, secrets: readonly string[], digests: TokenDigests = NO_DIGESTS): string {
  const known = secrets.filter((s) => s.length >= MIN_SECRET_LENGTH).map((s) => s.toLowerCase());
  if (holdsSecret(value, known)) return SECRET_MASK;
  return digests.size > 0 && isHashedToken([value, decodedFully(value)], digests) ? SECRET_MASK : value;
}
