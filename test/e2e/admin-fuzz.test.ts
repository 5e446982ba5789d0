import { request } from "node:http";
import { parse as parseQuery } from "node:querystring";
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { JOB_STATES, type JobState } from "../../src/vocabulary/jobs.js";
import { SERVICE_STATUSES } from "../../src/vocabulary/service-statuses.js";
import { createdEvent, TEST_ADMIN_TOKEN } from "../helpers/bridge.js";
import { untilIdle, usePairPerFile, type Pair as TestPair } from "../helpers/e2e-harness.js";

/**
 * Property-based checks of the admin API (`/admin/services/:id`, `/admin/licenses`,
 * `/admin/jobs`, `/admin/jobs/:id/retry`, `/admin/reconcile`) over loopback, against the real
 * app and sandbox: never a 5xx; 401 whenever the token is missing or wrong, whatever else is
 * wrong; every 4xx a JSON `{error: string}`; a rejected request changes nothing in the database;
 * a 422 names the offending field in `errors`.
 *
 * Setup orders a few licences and lets the runner finish them (so the bridge and the sandbox
 * agree and a reconcile, even with `fix`, has nothing to repair), parks one job as failed (so a
 * retry can succeed once), then stops the runner: while a property runs, only requests write.
 * Requests go through node:http, not fetch, so paths reach the server byte for byte (`..` is
 * not normalised away, malformed percent-encodings are not rejected by the client).
 */

// FUZZ_RUNS=5000 for a longer hunt; the default keeps the file to a few seconds.
const RUNS = { numRuns: Number(process.env.FUZZ_RUNS ?? 150), interruptAfterTimeLimit: 20_000 } as const;
const KNOWN = ["afz-cpanel", "afz-litespeed", "afz-bundle"] as const;
const FAILED_KIND = "admin_fuzz_no_handler";

let port: number;
/** The highest job id after setup: ids 1..maxJobId are real jobs, a few past it are not. */
let maxJobId = 0;
/** The one failed job, which a retry can requeue. */
let failedJobId = 0;

// Each request comes from an address of its own, through a trusted proxy: a wrong token is 401
// every time, as the properties say, and never the failure limit's 429 (test/e2e/failed-logins.test.ts).
const pair = usePairPerFile({ setup, env: { TRUST_PROXY: "loopback" } });

async function setup({ bridge }: TestPair): Promise<void> {
  port = Number(new URL(bridge.url).port);
  const orders = { "afz-cpanel": ["12", "203.0.113.41"], "afz-litespeed": ["13", "203.0.113.42"], "afz-bundle": ["20", "203.0.113.43"] } as const;
  for (const id of KNOWN) {
    const [product_id, ip] = orders[id];
    const res = await bridge.send(createdEvent({ id, product_id, ip }));
    if (res.status !== 202) throw new Error(`setup: service.created answered ${res.status}`);
  }
  // A job no handler knows, with one attempt: it ends failed, so one fuzzed retry can answer 202.
  await bridge.service.queue.enqueue({ kind: FAILED_KIND, maxAttempts: 1 });
  await untilIdle(bridge);
  await bridge.service.runner.stop(0);
  for (const id of KNOWN) {
    const status = (await bridge.service.services.get(id))?.status;
    if (status !== "active") throw new Error(`setup: ${id} is ${status}`);
  }
  // Jobs are listed newest (highest id) first.
  maxJobId = (await bridge.service.queue.list({ limit: 1 }))[0]!.id;
  const failed = (await bridge.service.queue.list({ state: "failed" })).filter((j) => j.kind === FAILED_KIND);
  if (failed.length !== 1) throw new Error("setup: the failed job is missing");
  failedJobId = failed[0]!.id;
  // The two sides agree: a reconcile finds nothing, so even `{"fix": true}` writes nothing.
  const dry = await bridge.admin("/admin/reconcile", { method: "POST", body: "{}" });
  if (dry.status !== 200 || (dry.body.drift as unknown[]).length !== 0) {
    throw new Error(`setup: reconcile found drift: ${dry.status} ${JSON.stringify(dry.body).slice(0, 500)}`);
  }
}

// ---- plumbing ------------------------------------------------------------------------------

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  json: unknown;
}

let clients = 0;
/** A client address no request before used (2001:db8::/32, one /64 each: the limit counts an IPv6 client by its /64). */
const nextClient = () => {
  const n = ++clients;
  return `2001:db8:${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}::1`;
};

/**
 * One request with the exact path, headers and body given (node:http adds host and connection).
 * The length is always explicit: for OPTIONS (and GET, DELETE...) node:http would otherwise send
 * the body with neither content-length nor chunked framing, and the server would read it as the
 * start of the next request on the connection.
 */
function send(method: string, path: string, headers: Record<string, string>, body?: Buffer | string): Promise<RawResponse> {
  const framing = body === undefined ? {} : { "content-length": String(Buffer.byteLength(body)) };
  return new Promise((ok, fail) => {
    const req = request({ host: "127.0.0.1", port, method, path, headers: { ...headers, ...framing, "x-forwarded-for": nextClient() } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", fail);
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        ok({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on("error", fail);
    req.end(body);
  });
}

/**
 * Rows in every table a request could write to, and the content of the rows a request could
 * change (every service and job, the open alerts), read through the store's operations.
 */
async function storeState(): Promise<{ rows: Record<string, number>; content: unknown }> {
  const { store } = pair().bridge.service;
  const [rows, services, jobs, alerts] = await Promise.all([store.counts(), store.services.list(), store.jobs.list({ limit: 1_000_000 }), store.alerts.open()]);
  return { rows: { ...rows, open_alerts: alerts.length }, content: { services, jobs, alerts } };
}

type Auth = { kind: "valid" | "missing" | "wrong" | "garbled"; header?: string };

function authHeaders(auth: Auth): Record<string, string> {
  return auth.header === undefined ? {} : { authorization: auth.header };
}

/**
 * Sends a request and checks the invariants every admin answer keeps; returns the response.
 * A 401 is required exactly when the token is missing or wrong.
 */
async function checked(method: string, path: string, auth: Auth, headers: Record<string, string> = {}, body?: Buffer | string): Promise<RawResponse> {
  const before = await storeState();
  const res = await send(method, path, { ...headers, ...authHeaders(auth) }, body);
  const after = await storeState();
  const context = `${method} ${path.slice(0, 300)} auth=${JSON.stringify(auth).slice(0, 200)} headers=${JSON.stringify(headers).slice(0, 200)} body=${String(body ?? "").slice(0, 200)} -> ${res.status} ${res.text.slice(0, 300)}`;
  expect(res.status, context).toBeGreaterThanOrEqual(200);
  expect(res.status, context).toBeLessThan(500);
  if (auth.kind === "valid") expect(res.status, context).not.toBe(401);
  else {
    expect(res.status, context).toBe(401);
    expect(res.headers["www-authenticate"], context).toMatch(/^Bearer /);
  }
  if (res.status >= 400) {
    expect(res.headers["content-type"], context).toMatch(/^application\/json/);
    // A HEAD answer has the headers of the GET and no body.
    if (method !== "HEAD") expect(res.json, `4xx without a JSON {error, code}: ${context}`).toEqual(expect.objectContaining({ error: expect.any(String), code: expect.any(String) }));
    expect(after.rows, `rows written by a rejected request: ${context}`).toEqual(before.rows);
    expect(after.content, `rows changed by a rejected request: ${context}`).toEqual(before.content);
  } else {
    // No admin request inserts or deletes a row here: reads read, a retry updates its job, and
    // the sandbox and the bridge agree, so a reconcile has nothing to repair.
    expect(after.rows, `rows written by ${context}`).toEqual(before.rows);
  }
  return res;
}

/** The error body of a 422. */
function errorsOf(res: RawResponse): Record<string, string[]> {
  const errors = (res.json as { errors?: unknown }).errors;
  expect(errors, `422 without errors: ${res.text.slice(0, 300)}`).toEqual(expect.any(Object));
  for (const messages of Object.values(errors as object)) expect(messages).toEqual(expect.arrayContaining([expect.any(String)]));
  return errors as Record<string, string[]>;
}

/** A 422 names `field`: as a key of `errors`, or (for an unknown key, reported on the whole input) inside a message. */
function expectNamed(res: RawResponse, field: string): void {
  const errors = errorsOf(res);
  // zod quotes the key without escaping it: `Unrecognized key: "a"b"`.
  const named = field in errors || Object.values(errors).some((ms) => ms.some((m) => m.includes(`"${field}"`)));
  expect(named, `422 does not name ${JSON.stringify(field)}: ${res.text.slice(0, 500)}`).toBe(true);
}

// ---- arbitraries ---------------------------------------------------------------------------

/** Percent-encodes everything but RFC 3986 unreserved characters, as UTF-8 (lone surrogates become U+FFFD). */
function pct(s: string): string {
  let out = "";
  for (const b of Buffer.from(s, "utf8")) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

const TOKEN = TEST_ADMIN_TOKEN;
/** Header-value characters node:http will send: tab, visible ASCII and space, obs-text. */
const headerChar = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
  { weight: 1, arbitrary: fc.constant(0x09) },
  { weight: 1, arbitrary: fc.integer({ min: 0x80, max: 0xff }) },
).map((c) => String.fromCharCode(c));
const headerText = (maxLength: number) => fc.string({ unit: headerChar, maxLength });
const space = fc.string({ unit: fc.constantFrom(" ", "\t"), minLength: 1, maxLength: 3 });

const validAuth: fc.Arbitrary<Auth> = fc.oneof(
  { weight: 3, arbitrary: fc.constant<Auth>({ kind: "valid", header: `Bearer ${TOKEN}` }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom("Bearer", "bearer", "BEARER", "bEaReR"), space, fc.constantFrom("", " ", "  ", "\t"))
      .map(([scheme, sp, trail]): Auth => ({ kind: "valid", header: `${scheme}${sp}${TOKEN}${trail}` })),
  },
);

const badAuth: fc.Arbitrary<Auth> = fc.oneof(
  fc.constant<Auth>({ kind: "missing" }),
  fc
    .constantFrom(
      TOKEN.slice(0, -1),
      `${TOKEN}x`,
      TOKEN.toUpperCase(),
      `${TOKEN} ${TOKEN}`,
      `"${TOKEN}"`,
      Buffer.from(TOKEN).toString("base64"),
      "",
      "null",
      "undefined",
    )
    .map((t): Auth => ({ kind: "wrong", header: `Bearer ${t}` })),
  headerText(80)
    .filter((t) => t.trim() !== TOKEN)
    .map((t): Auth => ({ kind: "wrong", header: `Bearer ${t}` })),
  fc
    .constantFrom(
      TOKEN,
      `Basic ${Buffer.from(`admin:${TOKEN}`).toString("base64")}`,
      `Token ${TOKEN}`,
      `Bearer:${TOKEN}`,
      `Bearer-${TOKEN}`,
      `Bearer${TOKEN}`,
      `BearerX ${TOKEN}`,
      `X Bearer ${TOKEN}`,
      "Bearer",
      "Bearer ",
      "",
      " ",
      "\u00ff\u00fe",
    )
    .map((h): Auth => ({ kind: "garbled", header: h })),
  headerText(300)
    .filter((h) => !h.includes(TOKEN))
    .map((h): Auth => ({ kind: "garbled", header: h })),
  fc.string({ unit: fc.constantFrom("a", "B", "=", "+", "/", "\u00e9", " "), minLength: 2000, maxLength: 6000 }).map((h): Auth => ({ kind: "garbled", header: h })),
);

const anyAuth = fc.oneof({ weight: 3, arbitrary: validAuth }, { weight: 2, arbitrary: badAuth });
const valid: Auth = { kind: "valid", header: `Bearer ${TOKEN}` };

/** A path segment as it goes on the wire, and whether it is plain (no characters the router treats specially). */
type Segment = { wire: string; plain: boolean };

const visibleAscii = fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c));
const numberText = fc.oneof(
  fc.integer().map(String),
  fc.integer({ min: -5, max: 0 }).map(String),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
  fc.double().map(String), // NaN, Infinity, -0, 1e+308, 5e-324 ...
  fc.double({ min: 0.0001, max: 1000, noNaN: true }).map(String),
  fc.constantFrom("9007199254740991", "9007199254740992", "9007199254740993", "1e3", "1E400", "0x10", "0b11", "0o7", "+1", "01", "1.0", "1.", ".5", "1_0", " 1", "1 ", "١٢", "Infinity"),
);
const oddSegment = fc.constantFrom(
  "..",
  ".",
  "...",
  "%2e%2e",
  "%2E%2E%2F%2E%2E",
  "..%2f..%2fetc%2fpasswd",
  "%00",
  "a%00b",
  "%",
  "%%",
  "%zz",
  "%E0%A4%A",
  "%C0%AE",
  "%FF",
  "%ED%A0%80",
  "%252e",
  "%20",
  "%2F",
  "__proto__",
  "constructor",
  "toString",
  "null",
  "undefined",
  "NaN",
  "true",
);

function segment(extra: fc.Arbitrary<string>[] = []): fc.Arbitrary<Segment> {
  const plainish = (a: fc.Arbitrary<string>) => a.map((s): Segment => ({ wire: pct(s), plain: true }));
  return fc.oneof(
    plainish(fc.string({ minLength: 1, maxLength: 40 })),
    plainish(fc.string({ unit: "grapheme", minLength: 1, maxLength: 20 })),
    plainish(fc.string({ unit: "binary", minLength: 1, maxLength: 20 })),
    plainish(fc.integer({ min: 100, max: 4000 }).map((n) => "a".repeat(n))),
    plainish(fc.integer({ min: 10, max: 300 }).map((n) => "\u{1F600}".repeat(n))),
    plainish(numberText.filter((s) => s.length > 0)),
    fc.string({ unit: visibleAscii, minLength: 1, maxLength: 40 }).map((s): Segment => ({ wire: s, plain: false })),
    oddSegment.map((s): Segment => ({ wire: s, plain: false })),
    ...extra.map(plainish),
  );
}

/** The parameter Express hands the route for a plain segment. */
const decoded = (seg: Segment) => decodeURIComponent(seg.wire);

// ---- GET /admin/services/:id ---------------------------------------------------------------

describe("admin fuzz: GET /admin/services/:id", () => {
  it("never 5xx; 401 without the token; otherwise the known licence, or a JSON 400/404", async () => {
    await fc.assert(
      fc.asyncProperty(segment([fc.constantFrom(...KNOWN)]), anyAuth, async (seg, auth) => {
        const res = await checked("GET", `/admin/services/${seg.wire}`, auth);
        if (auth.kind !== "valid") return;
        expect([200, 400, 404], res.text.slice(0, 300)).toContain(res.status);
        if (res.status === 200) {
          const body = res.json as { service_id: string; history: unknown[] };
          expect(KNOWN).toContain(body.service_id);
          expect(body.history).toEqual(expect.any(Array));
        }
        if (seg.plain) {
          const id = decoded(seg);
          expect(res.status, `id ${JSON.stringify(id).slice(0, 200)}`).toBe((KNOWN as readonly string[]).includes(id) ? 200 : 404);
          if (res.status === 200) expect((res.json as { service_id: string }).service_id).toBe(id);
        }
      }),
      RUNS,
    );
  });
});

// ---- POST /admin/jobs/:id/retry ------------------------------------------------------------

/** What a job id may be: plain decimal digits without a leading zero (never `0x1`, `1e3`, ` 1`). */
function validJobId(param: string): number | undefined {
  const n = Number(param);
  return /^[1-9][0-9]*$/.test(param) && Number.isSafeInteger(n) ? n : undefined;
}

const otherContentTypes = fc.constantFrom(
  "application/json; charset=utf-8",
  "application/json; charset=latin1",
  "application/json; charset=utf-16",
  "Application/JSON",
  "application/vnd.api+json",
  "application/merge-patch+json",
  "text/plain",
  "text/json",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/octet-stream",
  "json",
  "application/",
  ";;;",
  "",
);
/** Half the time one the JSON parser takes, so the schema is reached often. */
const contentTypes = fc.oneof(fc.constantFrom("application/json", "application/json; charset=utf-8"), otherContentTypes);

/** `{"fix":true,"pad":"xxx..."}` of about `size` bytes; counterexamples show the size, not the text. */
class Padded {
  constructor(readonly size: number) {}
  toString(): string {
    return JSON.stringify({ fix: true, pad: "x".repeat(this.size) });
  }
  [fc.toStringMethod](): string {
    return `Padded(${this.size})`;
  }
}
type Body = string | Buffer | Padded;
const wire = (b: Body): string | Buffer => (b instanceof Padded ? b.toString() : b);

/** Bodies of every sort: JSON (valid for reconcile or not), broken JSON, text, bytes, large. */
const anyBody: fc.Arbitrary<Body> = fc.oneof(
  fc.constantFrom("", "{}", '{"fix":true}', '{"fix":false}', "[]", "null", "true", "0", '"fix"', "{", '{"fix":', "fix=true", "\u0000", "\ufeff{}"),
  fc.json({ maxDepth: 3 }),
  fc.record({ fix: fc.jsonValue({ maxDepth: 2 }) }, { requiredKeys: [] }).map((v) => JSON.stringify(v)),
  fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }).map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 200 }),
  fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
  fc.integer({ min: 60_000, max: 70_000 }).map((n) => new Padded(n)),
);

describe("admin fuzz: POST /admin/jobs/:id/retry", () => {
  it("never 5xx; 401 without the token; a malformed id is a 422 naming `id`; otherwise 202, 404 or 409 as the job stands", async () => {
    const { bridge } = pair();
    const smallIds = fc.integer({ min: 1, max: maxJobId + 3 }).map(String);
    const failedJob: Segment = { wire: String(failedJobId), plain: true };
    await fc.assert(
      fc.asyncProperty(segment([smallIds, smallIds]), anyAuth, fc.option(contentTypes), fc.option(anyBody), async (seg, auth, ct, body) => {
        const plainId = seg.plain ? decoded(seg) : undefined;
        const id = plainId === undefined ? undefined : validJobId(plainId);
        const job = id === undefined ? undefined : await bridge.service.queue.get(id);
        const headers: Record<string, string> = ct === null ? {} : { "content-type": ct };
        const res = await checked("POST", `/admin/jobs/${seg.wire}/retry`, auth, headers, body === null ? undefined : wire(body));
        if (auth.kind !== "valid") return;
        expect([202, 400, 404, 409, 422], res.text.slice(0, 300)).toContain(res.status);
        if (res.status === 422) expectNamed(res, "id");
        if (res.status === 202) expect((res.json as { job: { state: string } }).job.state).toBe("queued");
        if (plainId !== undefined) {
          const expected = id === undefined ? 422 : !job ? 404 : job.state === "failed" || job.state === "blocked" ? 202 : 409;
          expect(res.status, `id ${JSON.stringify(plainId).slice(0, 200)} (job ${job?.state ?? "none"})`).toBe(expected);
        }
      }),
      // The failed job: retried once (202), then queued, so a second retry is a 409.
      { ...RUNS, examples: [[failedJob, valid, null, null], [failedJob, valid, "text/plain", "x"], [{ wire: "-1", plain: true }, valid, null, null]] },
    );
  });
});

// ---- GET /admin/licenses and /admin/jobs ---------------------------------------------------

type Pair = [string, string];

/** A query string from key/value pairs; either side percent-encoded or raw (visible ASCII, so `&`, `=`, `%`, `[]` and friends). */
function queryString(knownKeys: readonly string[], values: readonly string[]): fc.Arbitrary<string> {
  const key = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...knownKeys) },
    { weight: 1, arbitrary: fc.constantFrom("", "__proto__", "constructor", "toString", "hasOwnProperty", "state[]", "status[]", "state[0]", "a.b", "limit", "cursor", "offset", "STATE", "Status") },
    { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 20 }) },
  );
  const value = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...values) },
    { weight: 1, arbitrary: fc.constantFrom("", " ", "null", "undefined", "true", "1", "-1", "0", "1000", "1001", "1e3", "ACTIVE", "Queued", "active ", "queued\u0000") },
    { weight: 1, arbitrary: fc.string({ maxLength: 80 }) },
    { weight: 1, arbitrary: fc.string({ unit: "grapheme", minLength: 60, maxLength: 70 }) },
    { weight: 1, arbitrary: fc.integer({ min: 60, max: 4000 }).map((n) => "k".repeat(n)) },
  );
  const pair = fc.tuple(key, value).map(([k, v]: Pair) => `${pct(k)}=${pct(v)}`);
  const rawPart = fc.oneof(
    fc.string({ unit: visibleAscii, maxLength: 30 }).map((s) => s.replace(/#/g, "")),
    fc.constantFrom("state", "status", "=", "&", "&&", "state=%zz", "status=%", "state=%E0%A4%A", "%zz=1", "state=queued&state=", "state[]=queued", "service_id[x]=1"),
  );
  return fc.array(fc.oneof({ weight: 4, arbitrary: pair }, { weight: 1, arbitrary: rawPart }), { maxLength: 6 }).map((parts) => parts.join("&"));
}

/**
 * The fields a query must be rejected for, computed from what Express 5's default ("simple")
 * query parser, node:querystring, makes of it.
 */
function offendingQueryFields(qs: string, rules: Record<string, (v: string) => boolean>): string[] {
  const query = parseQuery(qs);
  const out: string[] = [];
  for (const [k, v] of Object.entries(query)) {
    const rule = Object.hasOwn(rules, k) ? rules[k] : undefined;
    if (!rule || typeof v !== "string" || !rule(v)) out.push(k);
  }
  return out;
}

/** zod 4 measures a string in code points, not UTF-16 units. */
const within = (n: number) => (v: string) => [...v].length <= n;
const within64 = within(64);
/** Paging (every listing): a limit of 1-1000 in plain digits; a cursor only as a listing answered it, which no fuzzed value is. */
const pagingRules = {
  limit: (v: string) => v === "" || (/^[1-9][0-9]{0,6}$/.test(v) && Number(v) <= 1000),
  cursor: (v: string) => v === "",
};
/** An empty value is no filter (the contract writes the filters as `?status=`). */
const licensesRules = { status: (v: string) => v === "" || (SERVICE_STATUSES as readonly string[]).includes(v), q: within(256), ...pagingRules };
const jobsRules = {
  state: (v: string) => v === "" || (JOB_STATES as readonly string[]).includes(v),
  service_id: within64,
  kind: within64,
  ...pagingRules,
};

describe("admin fuzz: query strings", () => {
  it("GET /admin/licenses: never 5xx; 401 without the token; 422 naming each bad or unknown key; else 200 {licenses}", async () => {
    await fc.assert(
      fc.asyncProperty(queryString(["status"], SERVICE_STATUSES), anyAuth, async (qs, auth) => {
        const res = await checked("GET", `/admin/licenses?${qs}`, auth);
        if (auth.kind !== "valid") return;
        const offending = offendingQueryFields(qs, licensesRules);
        expect(res.status, `query ${qs.slice(0, 300)} -> ${res.text.slice(0, 300)}`).toBe(offending.length ? 422 : 200);
        if (res.status === 422) for (const f of offending) expectNamed(res, f);
        else {
          const { licenses } = res.json as { licenses: { status: string }[] };
          expect(licenses).toEqual(expect.any(Array));
          const status = parseQuery(qs).status as string | undefined;
          if (status) for (const l of licenses) expect(l.status).toBe(status);
        }
      }),
      RUNS,
    );
  });

  it("GET /admin/jobs: never 5xx; 401 without the token; 422 naming each bad or unknown key; else 200 {jobs}", async () => {
    await fc.assert(
      fc.asyncProperty(
        queryString(["state", "service_id", "kind"], [...JOB_STATES, ...KNOWN, "register", FAILED_KIND]),
        anyAuth,
        async (qs, auth) => {
          const res = await checked("GET", `/admin/jobs?${qs}`, auth);
          if (auth.kind !== "valid") return;
          const offending = offendingQueryFields(qs, jobsRules);
          expect(res.status, `query ${qs.slice(0, 300)} -> ${res.text.slice(0, 300)}`).toBe(offending.length ? 422 : 200);
          if (res.status === 422) for (const f of offending) expectNamed(res, f);
          else expect((res.json as { jobs: unknown }).jobs).toEqual(expect.any(Array));
        },
      ),
      RUNS,
    );
  });

  it("GET /admin/jobs?state=<a real state> with the token always answers 200 {jobs} of that state", async () => {
    const { bridge } = pair();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<JobState>(...JOB_STATES),
        fc.option(fc.constantFrom(...KNOWN, "afz-none")),
        fc.option(fc.constantFrom("register", FAILED_KIND, "nothing")),
        validAuth,
        async (state, serviceId, kind, auth) => {
          const qs = [`state=${state}`, ...(serviceId ? [`service_id=${serviceId}`] : []), ...(kind ? [`kind=${kind}`] : [])];
          const res = await checked("GET", `/admin/jobs?${qs.join("&")}`, auth);
          expect(res.status, res.text.slice(0, 300)).toBe(200);
          const { jobs } = res.json as { jobs: { state: string; service_id: string | null; kind: string }[] };
          expect(jobs).toEqual(expect.any(Array));
          for (const j of jobs) {
            expect(j.state).toBe(state);
            if (serviceId) expect(j.service_id).toBe(serviceId);
            if (kind) expect(j.kind).toBe(kind);
          }
          const expected = await bridge.service.queue.list({ state, serviceId: serviceId ?? undefined, kind: kind ?? undefined });
          expect(jobs.length).toBe(expected.length);
        },
      ),
      RUNS,
    );
  });
});

// ---- POST /admin/reconcile -----------------------------------------------------------------

/** What a plain `application/json` reconcile body must get: its status, and the fields a 422 must name. */
function expectedReconcile(text: string, bytes: number): { status: number; offending: string[] } {
  if (bytes > 64 * 1024) return { status: 413, offending: [] };
  if (text === "") return { status: 200, offending: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { status: 400, offending: [] };
  }
  // JSON that is not an object (null, a number, a list) is valid JSON of the wrong shape: 422 naming the body.
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return { status: 422, offending: ["(body)"] };
  const offending = Object.entries(parsed).filter(([k, v]) => k !== "fix" || typeof v !== "boolean").map(([k]) => k);
  return { status: offending.length ? 422 : 200, offending };
}

const encodings = fc.constantFrom("", "identity", "gzip", "gzip-garbage", "deflate", "br", "compress", "x-unknown", "gzip, gzip");

describe("admin fuzz: POST /admin/reconcile", () => {
  it("never 5xx; 401 without the token; JSON bodies: 400 broken, 413 too large, 415 bad charset or encoding, 422 naming the field; nothing written", async () => {
    await fc.assert(
      fc.asyncProperty(anyBody, fc.option(contentTypes), encodings, anyAuth, async (body, ct, encoding, auth) => {
        const headers: Record<string, string> = {};
        if (ct !== null) headers["content-type"] = ct;
        const plain = wire(body);
        let sent: Buffer | string = plain;
        if (encoding === "gzip") sent = gzipSync(Buffer.from(plain));
        else if (encoding === "gzip-garbage") sent = Buffer.concat([Buffer.from([0x1f, 0x8b]), Buffer.from(plain)]);
        if (encoding) headers["content-encoding"] = encoding === "gzip-garbage" ? "gzip" : encoding;
        const res = await checked("POST", "/admin/reconcile", auth, headers, sent);
        if (auth.kind !== "valid") return;
        expect([200, 400, 409, 413, 415, 422], res.text.slice(0, 300)).toContain(res.status);
        if (res.status === 200) {
          const result = res.json as { drift: unknown[]; fixed: unknown[]; manual: unknown[] };
          expect(result).toEqual({ drift: [], fixed: [], manual: [] });
        }
        // A plain JSON body: what the schema makes of it is known exactly.
        const plainJson = ct !== null && /^application\/json(; charset=utf-8)?$/i.test(ct) && (encoding === "" || encoding === "identity" || encoding === "gzip");
        if (!plainJson) return;
        // body-parser decodes with iconv-lite, which drops a leading byte-order mark.
        const text = Buffer.from(plain).toString("utf8").replace(/^\ufeff/, "");
        const expected = expectedReconcile(text, Buffer.byteLength(plain));
        expect(res.status, `${text.slice(0, 200)} -> ${res.text.slice(0, 300)}`).toBe(expected.status);
        if (expected.status === 422) errorsOf(res);
        for (const f of expected.offending) expectNamed(res, f);
      }),
      {
        ...RUNS,
        // One of each answer, whatever the seed.
        examples: [
          ['{"fix":true}', "application/json", "", valid],
          ['{"fix":false}', "application/json", "gzip", valid],
          ["{", "application/json", "", valid],
          ["null", "application/json", "", valid],
          [new Padded(65_000), "application/json", "", valid],
          [new Padded(65_000), "application/json", "gzip", valid],
          ['{"fix":true}', "application/json; charset=latin1", "", valid],
          ['{"fix":true}', "application/json", "x-unknown", valid],
          ['{"fix":true}', "application/json", "gzip-garbage", valid],
          ['{"fix":"yes","dry_run":true}', "application/json", "", valid],
          ["[]", "application/json", "", valid],
          ['{"fix":true}', "application/json", "", { kind: "missing" }],
        ],
      },
    );
  });
});

// ---- anything else under /admin ------------------------------------------------------------

describe("admin fuzz: any method and path under /admin", () => {
  it("is a 401 without the token, and never a 5xx or a non-JSON 4xx with it", async () => {
    const suffix = fc.array(segment(), { maxLength: 4 }).map((segs) => segs.map((s) => s.wire).join("/"));
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"),
        fc.constantFrom("/admin", "/admin/", "/ADMIN/", "/admin/services/", "/admin/jobs/", "/admin/licenses/", "/admin/reconcile/", "/Admin/Jobs/"),
        suffix,
        anyAuth,
        async (method, prefix, rest, auth) => {
          const path = rest === "" || prefix.endsWith("/") ? `${prefix}${rest}` : `${prefix}/${rest}`;
          const res = await checked(method, path, auth, { "content-type": "application/json" }, method === "GET" || method === "HEAD" ? undefined : "{}");
          if (auth.kind === "valid") expect(res.status).not.toBe(401);
        },
      ),
      RUNS,
    );
  });
});

// ---- messages ------------------------------------------------------------------------------

describe("admin fuzz: 422 messages", () => {
  // A field that was sent with the wrong type (an array for a repeated query key, a string for
  // `fix`) is not missing: the message should say what is wrong with it (for `fix`, the schema's
  // own "must be true or false"), not "is required".
  it("never says a field that was sent \"is required\"", async () => {
    const sentField = fc.oneof(
      fc.jsonValue({ maxDepth: 1 }).filter((v) => typeof v !== "boolean").map((fix) => ({ path: "/admin/reconcile", method: "POST", body: JSON.stringify({ fix }), field: "fix" })),
      fc.constantFrom("state", "service_id", "kind").map((k) => ({ path: `/admin/jobs?${k}=queued&${k}=failed`, method: "GET", body: undefined, field: k })),
      fc.constant({ path: "/admin/licenses?status=active&status=failed", method: "GET", body: undefined, field: "status" }),
    );
    await fc.assert(
      fc.asyncProperty(sentField, async ({ path, method, body, field }) => {
        const res = await checked(method, path, { kind: "valid", header: `Bearer ${TOKEN}` }, { "content-type": "application/json" }, body);
        expect(res.status).toBe(422);
        expect(errorsOf(res)[field], `${method} ${path} ${body ?? ""} -> ${res.text}`).not.toContain("is required");
      }),
      {
        ...RUNS,
        numRuns: Math.min(RUNS.numRuns, 50),
        examples: [[{ path: "/admin/reconcile", method: "POST", body: '{"fix":"yes"}', field: "fix" }]],
      },
    );
  });
});
