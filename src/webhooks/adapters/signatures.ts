import { createHash, timingSafeEqual } from "node:crypto";

export function sha256Hex(...parts: (string | Buffer)[]): string {
  const h = createHash("sha256");
  for (const p of parts) h.update(p).update("\0");
  return h.digest("hex");
}

/** Every plausible decoding of a signature header value: hex, base64 or base64url. */
export function signatureCandidates(value: string): Buffer[] {
  let s = value.trim();
  const eq = /^(?:sha256|v1)[=,]/i.exec(s);
  if (eq) s = s.slice(eq[0].length);
  const out: Buffer[] = [];
  if (/^[0-9a-fA-F]+$/.test(s) && s.length % 2 === 0) out.push(Buffer.from(s, "hex"));
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(s)) out.push(Buffer.from(s.replace(/-/g, "+").replace(/_/g, "/"), "base64"));
  return out;
}

/** Constant-time: does any candidate equal any expected digest? */
export function anyDigestMatches(expected: readonly Buffer[], candidates: readonly Buffer[]): boolean {
  let ok = false;
  for (const e of expected) {
    for (const c of candidates) {
      if (c.length === e.length && timingSafeEqual(c, e)) ok = true;
    }
  }
  return ok;
}

/** Constant-time string equality of secrets of any length: compares their SHA-256 digests. */
export function secretEquals(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given, "utf8").digest();
  const b = createHash("sha256").update(expected, "utf8").digest();
  return timingSafeEqual(a, b);
}
