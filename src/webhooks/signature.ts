import { createHmac, timingSafeEqual } from "node:crypto";

/** Standard Webhooks (standardwebhooks.com): one error, short fixed messages. */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WebhookVerificationError";
  }
}

export const TOLERANCE_SECONDS = 5 * 60;

/** The key bytes of a `whsec_<base64>` secret. */
export function secretKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith("whsec_") ? secret.slice(6) : secret, "base64");
}

export function sign(key: Buffer, id: string, timestamp: number | string, body: string | Buffer): string {
  return createHmac("sha256", key).update(`${id}.${timestamp}.`).update(body).digest("base64");
}

export interface SignedHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

/** Headers for a body, as a panel (or `license-bridge trigger`, or a test) sends them. */
export function signWebhook(secret: string, id: string, body: string, nowMs = Date.now()): SignedHeaders {
  const ts = Math.floor(nowMs / 1000);
  return {
    "webhook-id": id,
    "webhook-timestamp": String(ts),
    "webhook-signature": `v1,${sign(secretKey(secret), id, ts, body)}`,
  };
}

/**
 * The Standard Webhooks timestamp rule: Unix seconds (digits only, as sent: not trimmed), at most
 * TOLERANCE_SECONDS either side of now. Returns the problem, or undefined when the timestamp is fine.
 */
export function checkTimestamp(timestamp: string | undefined, nowMs: number): string | undefined {
  if (timestamp === undefined || !/^\d{1,15}$/.test(timestamp)) return "Invalid timestamp";
  const ts = Number(timestamp);
  const now = Math.floor(nowMs / 1000);
  if (now - ts > TOLERANCE_SECONDS) return "Message timestamp too old";
  if (ts - now > TOLERANCE_SECONDS) return "Message timestamp too new";
  return undefined;
}

export interface VerifyInput {
  id: string | undefined;
  timestamp: string | undefined;
  signature: string | undefined;
  body: Buffer;
  keys: readonly Buffer[];
  nowMs: number;
}

/**
 * Verifies on the raw bytes, before anything parses them. Every `v1,` entry is tried against
 * every configured key (secret rotation), each comparison constant-time.
 */
export function verifyWebhook(input: VerifyInput): void {
  const { id, timestamp, signature } = input;
  if (!id || !timestamp || !signature) throw new WebhookVerificationError("Missing required headers");
  const problem = checkTimestamp(timestamp, input.nowMs);
  if (problem) throw new WebhookVerificationError(problem);

  const candidates = signature
    .split(" ")
    .filter((entry) => entry.startsWith("v1,"))
    .map((entry) => Buffer.from(entry.slice(3), "base64"));
  for (const key of input.keys) {
    const expected = Buffer.from(sign(key, id, timestamp, input.body), "base64");
    for (const candidate of candidates) {
      if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) return;
    }
  }
  throw new WebhookVerificationError("No matching signature found");
}
