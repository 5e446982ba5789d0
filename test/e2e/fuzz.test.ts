import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENT_TYPES } from "../../src/intake/event-schema.js";
import { sign, secretKey } from "../../src/webhooks/signature.js";
import { createdEvent, serviceEvent, startTestBridge, startTestSandbox, TEST_SECRET, uniqueId, uniqueIp, type TestBridge, type TestSandbox } from "../helpers/bridge.js";
import { OTHER_SECRET, rawPost, rowCounts, signedHeaders } from "../helpers/e2e-harness.js";

/**
 * Property-based checks of the webhook intake: whatever arrives, the answer is never a 5xx,
 * and a rejected (4xx) request writes nothing. The job runner is stopped so that only the
 * intake writes rows while a property runs.
 */

// FUZZ_RUNS=5000 for a longer hunt; the default keeps the suite to a few seconds.
const RUNS = { numRuns: Number(process.env.FUZZ_RUNS ?? 100), interruptAfterTimeLimit: 20_000 } as const;
const KNOWN = ["fz-cpanel", "fz-litespeed", "fz-bundle"] as const;

let sb: TestSandbox;
let bridge: TestBridge;

beforeAll(async () => {
  sb = await startTestSandbox();
  bridge = await startTestBridge(sb);
  await bridge.service.runner.stop(0);
  const products = { "fz-cpanel": "12", "fz-litespeed": "13", "fz-bundle": "20" } as const;
  for (const id of KNOWN) {
    const res = await bridge.send(createdEvent({ id, product_id: products[id] }));
    if (res.status !== 202) throw new Error(`setup: ${res.status}`);
  }
});

afterAll(async () => {
  await bridge?.close();
  await sb?.close();
});

/** Posts and checks the two invariants; returns the status. */
async function postAndCheck(headers: Record<string, string>, body: string): Promise<number> {
  const before = await rowCounts(bridge);
  const res = await rawPost(bridge.url, headers, body);
  const after = await rowCounts(bridge);
  const context = `status ${res.status} ${JSON.stringify(res.body).slice(0, 300)} for body ${body.slice(0, 300)} headers ${JSON.stringify(headers).slice(0, 400)}`;
  expect(res.status, context).toBeGreaterThanOrEqual(200);
  expect(res.status, context).toBeLessThan(500);
  if (res.status >= 400) {
    expect(after, `rows written by a rejected request: ${context}`).toEqual(before);
    expect(res.body.error, `4xx without an error message: ${context}`).toEqual(expect.any(String));
    expect(res.body.code, `4xx without an error code: ${context}`).toEqual(expect.any(String));
  }
  if (res.status === 202) expect(after.events, context).toBe(before.events + 1);
  if (res.status === 200) expect(after, context).toEqual(before);
  return res.status;
}

// ---- bodies --------------------------------------------------------------------------------

const EXTRAS: Record<string, Record<string, unknown>> = {
  "service.product_changed": { changes: { product_id: "15" } },
  "service.renewed": { service: { next_due_date: "2030-01-31" } },
};

const validEvent = fc
  .tuple(fc.constantFrom(...EVENT_TYPES), fc.constantFrom(...KNOWN, "fz-unknown"), fc.uuid())
  .map(([type, id, fresh]) =>
    type === "service.created"
      ? (createdEvent({ id: `fz-${fresh.slice(0, 8)}` }) as Record<string, unknown>)
      : type === "service.ip_changed"
        ? (serviceEvent(type, id, { changes: { ip: uniqueIp() } }) as Record<string, unknown>)
        : (serviceEvent(type, id, EXTRAS[type] ?? {}) as Record<string, unknown>),
  );

const PATHS: string[][] = [
  [],
  ["type"],
  ["service"],
  ["service", "id"],
  ["service", "product_id"],
  ["service", "billing_cycle"],
  ["service", "ip"],
  ["service", "customer"],
  ["service", "customer", "email"],
  ["service", "customer", "name"],
  ["service", "next_due_date"],
  ["changes"],
  ["changes", "ip"],
  ["changes", "product_id"],
  ["extra"],
  ["__proto__"],
  ["service", "constructor"],
];

const interesting = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(
    "",
    " ",
    "12",
    "13",
    "15",
    "20",
    "999",
    12,
    15,
    -1,
    1.5,
    1e308,
    "::1",
    "::ffff:203.0.113.1",
    "203.0.113.256",
    "203.0.113.5",
    "2026-02-30",
    "2026-13-01",
    "2030-01-01T00:00:00Z",
    "annually",
    "weekly",
    "service.created",
    "service.ip_changed",
    "a".repeat(300),
    "fz-cpanel",
    "x@y.z",
    null,
    true,
    [],
    {},
  ),
);

type Mutation = { op: "set"; path: string[]; value: unknown } | { op: "delete"; path: string[] };
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant("set" as const), path: fc.constantFrom(...PATHS), value: interesting }),
  fc.record({ op: fc.constant("delete" as const), path: fc.constantFrom(...PATHS) }),
);

function applyMutation(root: unknown, m: Mutation): unknown {
  if (m.path.length === 0) return m.op === "set" ? m.value : {};
  const isObject = typeof root === "object" && root !== null && !Array.isArray(root);
  const copy = (isObject ? structuredClone(root) : {}) as Record<string, unknown>;
  let node: Record<string, unknown> = copy;
  for (const key of m.path.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== "object" || next === null || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  const last = m.path[m.path.length - 1]!;
  if (m.op === "delete") delete node[last];
  else Object.defineProperty(node, last, { value: m.value, enumerable: true, writable: true, configurable: true });
  return copy;
}

const mutatedEvent = fc
  .tuple(validEvent, fc.array(mutation, { minLength: 1, maxLength: 4 }))
  .map(([event, ms]) => ms.reduce<unknown>(applyMutation, event));

const jsonBody: fc.Arbitrary<string> = fc.oneof(
  fc.json({ maxDepth: 4 }),
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
  fc.anything({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? "null"),
  mutatedEvent.map((v) => JSON.stringify(v) ?? "null"),
  validEvent.map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 200 }),
);

describe("fuzz: signed bodies", () => {
  it("never answers a correctly signed body with a 5xx, and a 4xx writes nothing", async () => {
    await fc.assert(
      fc.asyncProperty(jsonBody, async (body) => {
        await postAndCheck(signedHeaders(body), body);
      }),
      RUNS,
    );
  });

  it("never answers a mutated valid event with a 5xx, and a 4xx writes nothing", async () => {
    await fc.assert(
      fc.asyncProperty(mutatedEvent, async (event) => {
        const body = JSON.stringify(event) ?? "null";
        const status = await postAndCheck(signedHeaders(body), body);
        expect([200, 202, 400, 409, 413, 422], `status ${status} for ${body}`).toContain(status);
      }),
      RUNS,
    );
  });

  it("answers every unmutated valid event with 202 or 409 (unknown service), or 422 once its service is terminated", async () => {
    // The earlier properties may have terminated a known service already (its job waits: the runner is stopped).
    const terminated = async (id: string) => (await bridge.service.queue.list({ serviceId: id, kind: "terminate" })).length > 0;
    await fc.assert(
      fc.asyncProperty(validEvent, async (event) => {
        const body = JSON.stringify(event);
        const id = (event.service as { id: string }).id;
        const wasTerminated = await terminated(id);
        const status = await postAndCheck(signedHeaders(body), body);
        if (wasTerminated && event.type !== "service.terminated" && event.type !== "service.created") {
          expect(status, `status for ${body} after its service was terminated`).toBe(422);
          return;
        }
        const unknown = id === "fz-unknown";
        // fz-litespeed has max_ip_changes 3: once used up, its ip_changed is a 422.
        const limitHit = event.type === "service.ip_changed" && (event.service as { id: string }).id === "fz-litespeed";
        const productChangeOfNonLitespeed =
          event.type === "service.product_changed" && ["fz-cpanel", "fz-bundle"].includes((event.service as { id: string }).id);
        const expected = unknown ? [409] : limitHit || productChangeOfNonLitespeed ? [202, 422] : [202];
        expect(expected, `status ${status} for ${body}`).toContain(status);
      }),
      RUNS,
    );
  });
});

// ---- headers -------------------------------------------------------------------------------

const printable = (maxLength: number) =>
  fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength });

type Choice<T extends string> = { kind: T; text: string };

const idChoice = fc.oneof(
  fc.record({ kind: fc.constant("missing" as const), text: fc.constant("") }),
  fc.record({ kind: fc.constant("ok" as const), text: fc.uuid().map((u) => `msg_${u}`) }),
  fc.record({ kind: fc.constant("odd" as const), text: printable(300) }),
);
const tsChoice = fc.oneof(
  fc.record({ kind: fc.constant("missing" as const), text: fc.constant("") }),
  fc.record({ kind: fc.constant("ok" as const), text: fc.integer({ min: -240, max: 240 }).map((d) => String(Math.floor(Date.now() / 1000) + d)) }),
  fc.record({ kind: fc.constant("stale" as const), text: fc.integer({ min: 301, max: 10_000_000 }).map((d) => String(Math.floor(Date.now() / 1000) - d)) }),
  fc.record({ kind: fc.constant("future" as const), text: fc.integer({ min: 302, max: 10_000_000 }).map((d) => String(Math.floor(Date.now() / 1000) + d)) }),
  fc.record({ kind: fc.constant("garbled" as const), text: printable(30).filter((s) => !/^\d+$/.test(s)) }),
  fc.record({ kind: fc.constant("huge" as const), text: fc.constantFrom("99999999999999999999", "1e10", "-1", "0x10", "1.5", "") }),
);
const sigChoice = fc.oneof(
  fc.constant({ kind: "missing" as const }),
  fc.constant({ kind: "ok" as const }),
  fc.constant({ kind: "ok-among-garbage" as const }),
  fc.constant({ kind: "other-secret" as const }),
  fc.record({ kind: fc.constant("garbled" as const), text: printable(120) }),
  fc.record({ kind: fc.constant("random-v1" as const), text: fc.uint8Array({ minLength: 0, maxLength: 40 }).map((b) => `v1,${Buffer.from(b).toString("base64")}`) }),
  fc.constant({ kind: "wrong-version" as const }),
);
const ctChoice = fc.constantFrom(
  "application/json",
  "application/json; charset=utf-8",
  "Application/JSON",
  "application/cloudevents+json",
  "text/plain",
  "application/x-www-form-urlencoded",
  "",
  "json",
);

describe("fuzz: webhook headers", () => {
  it("never answers missing or garbled webhook-* headers with a 5xx, and a 4xx writes nothing", async () => {
    await fc.assert(
      fc.asyncProperty(idChoice, tsChoice, sigChoice, ctChoice, async (id: Choice<string>, ts: Choice<string>, sig, ct) => {
        const body = JSON.stringify(createdEvent({ id: uniqueId("fzh") }));
        const headers: Record<string, string> = {};
        if (ct) headers["content-type"] = ct;
        if (id.kind !== "missing") headers["webhook-id"] = id.text;
        if (ts.kind !== "missing") headers["webhook-timestamp"] = ts.text;
        const good = () => `v1,${sign(secretKey(TEST_SECRET), id.text, ts.text, body)}`;
        switch (sig.kind) {
          case "missing":
            break;
          case "ok":
            headers["webhook-signature"] = good();
            break;
          case "ok-among-garbage":
            headers["webhook-signature"] = `v2,abc v1,${Buffer.from("nope").toString("base64")} ${good()} v1,`;
            break;
          case "other-secret":
            headers["webhook-signature"] = `v1,${sign(secretKey(OTHER_SECRET), id.text, ts.text, body)}`;
            break;
          case "wrong-version":
            headers["webhook-signature"] = good().replace(/^v1,/, "v1a,");
            break;
          default:
            headers["webhook-signature"] = sig.text;
        }
        const status = await postAndCheck(headers, body);
        const jsonType = /^application\/(json|[\w.+-]+\+json)$/i.test(ct.split(";")[0]!.trim());
        const signed = id.kind !== "missing" && id.text !== "" && ts.kind === "ok" && (sig.kind === "ok" || sig.kind === "ok-among-garbage");
        const context = `status ${status} for ${JSON.stringify(headers).slice(0, 300)}`;
        if (!jsonType) expect(status, context).toBe(415);
        else if (!signed) expect(status, context).toBe(401);
        else expect([202, 400], context).toContain(status); // 400: a webhook-id longer than 256 characters
      }),
      RUNS,
    );
  });
});
