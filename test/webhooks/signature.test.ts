import { describe, expect, it } from "vitest";
import { secretKey, sign, signWebhook, verifyWebhook, WebhookVerificationError } from "../../src/webhooks/signature.js";

/**
 * Known answers: the Standard Webhooks specification's published test vector (the one its
 * reference libraries test against), so a panel signing with any of them is verified here.
 */
const VECTOR = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};

const headers = (signature = VECTOR.signature, id = VECTOR.id, timestamp = String(VECTOR.timestamp)) => ({
  "webhook-id": id,
  "webhook-timestamp": timestamp,
  "webhook-signature": signature,
});

const verifyAt = (nowSeconds: number, h = headers(), body = VECTOR.body, secrets = [VECTOR.secret]) =>
  verifyWebhook({
    id: h["webhook-id"],
    timestamp: h["webhook-timestamp"],
    signature: h["webhook-signature"],
    body: Buffer.from(body),
    keys: secrets.map(secretKey),
    nowMs: nowSeconds * 1000,
  });

describe("Standard Webhooks signatures: the specification's test vector", () => {
  it("signs the vector's message to its published signature", () => {
    expect(`v1,${sign(secretKey(VECTOR.secret), VECTOR.id, VECTOR.timestamp, VECTOR.body)}`).toBe(VECTOR.signature);
    expect(signWebhook(VECTOR.secret, VECTOR.id, VECTOR.body, VECTOR.timestamp * 1000)["webhook-signature"]).toBe(VECTOR.signature);
  });

  it("verifies the vector's delivery within the five minutes around its timestamp", () => {
    expect(() => verifyAt(VECTOR.timestamp)).not.toThrow();
    expect(() => verifyAt(VECTOR.timestamp + 299)).not.toThrow();
  });

  it("finds the vector's signature among several entries (a sender rotating its secret)", () => {
    expect(() => verifyAt(VECTOR.timestamp, headers(`v1,${Buffer.alloc(32).toString("base64")} ${VECTOR.signature}`))).not.toThrow();
  });

  it.each([
    ["the body altered", () => verifyAt(VECTOR.timestamp, headers(), '{"test": 2432232315}')],
    ["another webhook-id", () => verifyAt(VECTOR.timestamp, headers(VECTOR.signature, "msg_other"))],
    ["another timestamp", () => verifyAt(VECTOR.timestamp + 1, headers(VECTOR.signature, VECTOR.id, String(VECTOR.timestamp + 1)))],
    ["another secret", () => verifyAt(VECTOR.timestamp, headers(), VECTOR.body, ["whsec_" + Buffer.from("another-secret-123").toString("base64")])],
    ["a stale timestamp (more than 5 minutes)", () => verifyAt(VECTOR.timestamp + 301)],
  ])("refuses the vector with %s", (_what, verify) => {
    expect(verify).toThrow(WebhookVerificationError);
  });
});
