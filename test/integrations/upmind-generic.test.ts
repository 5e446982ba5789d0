/**
 * Upmind's *Generic* software-licence provision provider pointed at the provisioning API with no
 * code, as integrations/upmind/README.md tells an operator to set it up. `upmind()` below
 * imitates the provider (upmind/provision-provider-software-licenses, src/Providers/Generic/
 * Provider.php and its response handlers; see the README's Sources): the request it builds
 * (Guzzle form_params for every method but GET, the `extra` array merged into the top level,
 * Bearer access_token) and the checks it makes of the answer. Every claim of the README is
 * checked here against a real bridge and reseller sandbox.
 */
import { describe, expect, it } from "vitest";
import { TEST_PROVISIONING_TOKEN } from "../helpers/bridge.js";
import { untilIdle, upstreamCalls, usePair, waitStatus, type Pair } from "../helpers/e2e-harness.js";

/** The provider's settings form, filled in as the README says. */
interface Configuration {
  access_token: string | null;
  create_endpoint_url: string;
  create_endpoint_http_method: string;
  has_renew: boolean;
  renew_endpoint_url?: string;
  renew_endpoint_http_method?: string;
  has_change_package: boolean;
  change_package_endpoint_url?: string;
  change_package_endpoint_http_method?: string;
  has_suspension: boolean;
  suspend_endpoint_url?: string;
  suspend_endpoint_http_method?: string;
  unsuspend_endpoint_url?: string;
  unsuspend_endpoint_http_method?: string;
  has_termination: boolean;
  terminate_endpoint_url?: string;
  terminate_endpoint_http_method?: string;
  has_usage_data: boolean;
  has_reissue: boolean;
}

function readmeConfiguration(bridgeUrl: string, over: Partial<Configuration> = {}): Configuration {
  // on_pending=error: a call still at work answers 503, which Upmind records as a failure to run again (README).
  const at = (call: string) => `${bridgeUrl}/provision/v1/${call}?on_pending=error`;
  return {
    access_token: TEST_PROVISIONING_TOKEN,
    create_endpoint_url: at("create"),
    create_endpoint_http_method: "post",
    has_renew: true,
    renew_endpoint_url: at("renew"),
    renew_endpoint_http_method: "post",
    has_change_package: true,
    change_package_endpoint_url: at("change-package"),
    change_package_endpoint_http_method: "post",
    has_suspension: true,
    suspend_endpoint_url: at("suspend"),
    suspend_endpoint_http_method: "post",
    unsuspend_endpoint_url: at("unsuspend"),
    unsuspend_endpoint_http_method: "post",
    has_termination: true,
    terminate_endpoint_url: at("terminate"),
    terminate_endpoint_http_method: "post",
    has_usage_data: false,
    has_reissue: false,
    ...over,
  };
}

type Params = Record<string, unknown> & { extra?: Record<string, unknown> };
type Fn = "create" | "renew" | "changePackage" | "suspend" | "unsuspend" | "terminate";

/** What the provider ends with: a result, or the ProvisionFunctionError message an Upmind operator sees. */
type Outcome = { ok: true; result: Record<string, unknown> } | { ok: false; error: string };

interface Wire {
  status: number;
  contentType: string;
}

/** PHP's http_build_query, as Guzzle uses it for form_params and query: null left out, booleans 1/0, arrays as a[b]. */
function httpBuildQuery(params: Record<string, unknown>, prefix = ""): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(params)) {
    const key = prefix ? `${prefix}[${k}]` : k;
    if (v === null || v === undefined) continue;
    if (typeof v === "object") out.push(...httpBuildQuery(v as Record<string, unknown>, key));
    else out.push(`${phpUrlencode(key)}=${phpUrlencode(typeof v === "boolean" ? (v ? "1" : "0") : String(v))}`);
  }
  return out;
}
const phpUrlencode = (s: string) => encodeURIComponent(s).replace(/%20/g, "+").replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * One provider function: endpoint and method from the configuration, the params (with `extra`
 * merged in), then Upmind's response handler for that function.
 */
async function upmind(config: Configuration, fn: Fn, params: Params, wire: Wire[] = []): Promise<Outcome> {
  const endpoint = {
    create: [config.create_endpoint_url, config.create_endpoint_http_method, true],
    renew: [config.renew_endpoint_url, config.renew_endpoint_http_method, config.has_renew],
    changePackage: [config.change_package_endpoint_url, config.change_package_endpoint_http_method, config.has_change_package],
    suspend: [config.suspend_endpoint_url, config.suspend_endpoint_http_method, config.has_suspension],
    unsuspend: [config.unsuspend_endpoint_url, config.unsuspend_endpoint_http_method, config.has_suspension],
    terminate: [config.terminate_endpoint_url, config.terminate_endpoint_http_method, config.has_termination],
  }[fn];
  if (!endpoint[2]) return { ok: false, error: `No ${fn} endpoint set in this configuration` };
  const method = String(endpoint[1]).toUpperCase();
  const { extra, ...rest } = params;
  const requestParams = { ...rest, ...(extra ?? {}) };

  const headers: Record<string, string> = {};
  if (config.access_token) headers.Authorization = `Bearer ${config.access_token}`;
  let url = String(endpoint[0]);
  let body: string | undefined;
  const encoded = httpBuildQuery(requestParams).join("&");
  if (method === "GET") {
    if (encoded) url += `?${encoded}`;
  } else {
    headers["Content-Type"] = "application/x-www-form-urlencoded";
    body = encoded;
  }
  const res = await fetch(url, { method, headers, body });
  const text = await res.text();
  const contentType = res.headers.get("content-type") ?? "";
  wire.push({ status: res.status, contentType });

  // AbstractHandler::parse
  if (res.status < 200 || res.status >= 300) return { ok: false, error: `Service error: ${res.status} ${res.statusText}` };
  let data: unknown = null;
  if (res.status !== 204) {
    if (/application\/json|\+json/.test(contentType)) {
      try {
        data = JSON.parse(text);
      } catch {
        data = null;
      }
      if (!data) return { ok: false, error: "Invalid JSON response" };
    } else if (contentType === "" || /text\/html|text\/plain|application\/x-www-form-urlencoded/.test(contentType)) {
      if (text === "") return { ok: false, error: "Empty text response" };
      data = Object.fromEntries(new URLSearchParams(text));
    } else {
      return { ok: false, error: "Unable to parse response of this content type" };
    }
  }
  const d = (data ?? {}) as Record<string, unknown>;

  if (fn === "suspend" || fn === "unsuspend" || fn === "terminate") {
    // DefaultResponseHandler::assertResponseSuccess: `success`, then `result`; strictly one of these.
    if (data === null) return { ok: true, result: {} };
    const flag = d.success ?? d.result;
    if (flag === undefined || flag === null) return { ok: false, error: "Unable to parse result from service response" };
    return ["success", "ok", true, "true", 1, "1"].includes(flag as never) ? { ok: true, result: {} } : { ok: false, error: "Operation failed" };
  }
  // LicenseKeyResponseHandler: a non-empty scalar top-level license_key; the results' setters are typed
  // (strict_types): getLicenseKey(): string, setServiceIdentifier(?string), setPackageIdentifier(?string).
  const key = d.license_key;
  if (key === undefined || key === null || key === "" || typeof key === "object") {
    return { ok: false, error: "Unable to parse valid license_key from service response" };
  }
  for (const [field, v] of [["license_key", key], ["service_identifier", d.service_identifier], ["package_identifier", d.package_identifier]] as const) {
    if (v !== undefined && v !== null && typeof v !== "string") return { ok: false, error: `TypeError: ${field} must be of type string` };
  }
  const result: Record<string, unknown> = { license_key: key, package_identifier: d.package_identifier ?? params.package_identifier };
  if (fn === "create") result.service_identifier = d.service_identifier ?? params.service_identifier;
  return { ok: true, result };
}

/** CreateParams as Upmind fills them for a contract product (v3.5+: billing_cycle_months). */
function createParams(over: Params = {}): Params {
  return {
    customer_name: "Ann Example",
    customer_email: "ann@example.com",
    company_name: null,
    customer_identifier: "client-77",
    service_identifier: "upmind-cp-1001",
    package_identifier: "12",
    ip: "203.0.113.90",
    billing_cycle_months: 12,
    extra: { provision_note: "from the product's provision fields", brand_id: 3 },
    ...over,
  };
}

/** The license_key of a create that succeeded (fails the test otherwise). */
function keyOf(o: Outcome): string {
  if (!o.ok) throw new Error(`create failed: ${o.error}`);
  return String(o.result.license_key);
}

const row = (p: Pair, id: string) => p.bridge.service.services.get(id);

describe("Upmind's Generic software-licence provider, set up as integrations/upmind/README.md says", () => {
  const pair = usePair();
  const config = () => readmeConfiguration(pair().bridge.url);

  it("create: the form Upmind sends (billing_cycle_months, customer_identifier, extra fields) buys the licence; Upmind reads license_key", async () => {
    const wire: Wire[] = [];
    const created = await upmind(config(), "create", createParams(), wire);
    expect(created).toEqual({ ok: true, result: { license_key: expect.stringMatching(/^lb_/), service_identifier: "upmind-cp-1001", package_identifier: "12" } });
    expect(wire).toEqual([{ status: 200, contentType: "application/json; charset=utf-8" }]);
    expect(await row(pair(), "upmind-cp-1001")).toMatchObject({ status: "active", ip: "203.0.113.90", billing_cycle: "annually", months: 12, customer_email: "ann@example.com" });
    expect(pair().sb.sandbox.ledger()).toMatchObject([{ op: "register", ip: "203.0.113.90", months: 12 }]);
  });

  it("create run again (Upmind's staff re-running a provision) answers the same license_key and buys nothing", async () => {
    const first = await upmind(config(), "create", createParams());
    const again = await upmind(config(), "create", createParams());
    expect(again).toEqual(first);
    expect(pair().sb.sandbox.ledger()).toHaveLength(1);
  });

  it("suspend, unsuspend and terminate take the license_key and pass Upmind's success check", async () => {
    const { sb } = pair();
    const created = await upmind(config(), "create", createParams());
    const license_key = keyOf(created);
    const keyOnly = { license_key, customer_identifier: "client-77" };

    expect(await upmind(config(), "suspend", keyOnly)).toEqual({ ok: true, result: {} });
    expect((await row(pair(), "upmind-cp-1001"))?.status).toBe("suspended");
    expect(await upmind(config(), "suspend", keyOnly)).toEqual({ ok: true, result: {} });
    expect(await upmind(config(), "unsuspend", keyOnly)).toEqual({ ok: true, result: {} });
    expect((await row(pair(), "upmind-cp-1001"))?.status).toBe("active");
    expect(await upmind(config(), "terminate", keyOnly)).toEqual({ ok: true, result: {} });
    expect((await row(pair(), "upmind-cp-1001"))?.status).toBe("terminated");
    expect(upstreamCalls(sb, "suspend", "unsuspend").map((r) => r.op)).toEqual(["suspend", "unsuspend", "suspend"]);
  });

  it("renew moves paid-until on by the licence's own cycle; the billing_cycle_months Upmind sends with it is ignored", async () => {
    const created = await upmind(config(), "create", createParams());
    const license_key = keyOf(created);
    const before = (await row(pair(), "upmind-cp-1001"))!.paid_until!;
    const renewed = await upmind(config(), "renew", { license_key, customer_identifier: "client-77", package_identifier: "12", billing_cycle_months: 1, extra: { invoice: 5 } });
    expect(renewed).toEqual({ ok: true, result: { license_key, package_identifier: "12" } });
    const expected = new Date(before);
    expected.setUTCMonth(expected.getUTCMonth() + 12);
    expect(new Date((await row(pair(), "upmind-cp-1001"))!.paid_until!).toISOString()).toBe(expected.toISOString());
  });

  it("changePackage moves the licence to the new package_identifier (LiteSpeed 4 cores to 8) and returns license_key", async () => {
    const created = await upmind(config(), "create", createParams({ service_identifier: "upmind-cp-1002", package_identifier: "13", ip: "203.0.113.91" }));
    const license_key = keyOf(created);
    const changed = await upmind(config(), "changePackage", { license_key, customer_identifier: "client-77", package_identifier: "15", billing_cycle_months: 12 });
    expect(changed).toEqual({ ok: true, result: { license_key, package_identifier: "15" } });
    expect(await row(pair(), "upmind-cp-1002")).toMatchObject({ product_id: "15", variant: "litespeed8" });
    expect(upstreamCalls(pair().sb, "change-core").at(-1)?.params).toMatchObject({ old_type: "litespeed4", new_type: "litespeed8" });
  });

  it("every refusal is a non-2xx JSON answer, which Upmind shows as \"Service error: <status> <reason>\"", async () => {
    const { sb } = pair();
    const wire: Wire[] = [];
    expect(await upmind({ ...config(), access_token: null }, "create", createParams(), wire)).toEqual({ ok: false, error: "Service error: 401 Unauthorized" });
    expect(await upmind({ ...config(), access_token: "not-the-token" }, "create", createParams(), wire)).toEqual({ ok: false, error: "Service error: 401 Unauthorized" });
    expect(await upmind(config(), "create", createParams({ ip: null }), wire)).toEqual({ ok: false, error: "Service error: 422 Unprocessable Entity" });
    expect(await upmind(config(), "create", createParams({ billing_cycle_months: 2 }), wire)).toEqual({ ok: false, error: "Service error: 422 Unprocessable Entity" });
    expect(await upmind(config(), "create", createParams({ package_identifier: "999" }), wire)).toEqual({ ok: false, error: "Service error: 422 Unprocessable Entity" });
    expect(await upmind(config(), "suspend", { license_key: "lb_unknown" }, wire)).toEqual({ ok: false, error: "Service error: 404 Not Found" });

    sb.sandbox.setBalance(0);
    expect(await upmind(config(), "create", createParams(), wire)).toEqual({ ok: false, error: "Service error: 502 Bad Gateway" });
    expect(sb.sandbox.ledger()).toEqual([]);
    for (const w of wire) expect(w.contentType).toMatch(/^application\/json/);

    // Topped up, the same create (Upmind's retry) buys the licence once.
    sb.sandbox.setBalance(1000);
    expect(await upmind(config(), "create", createParams())).toMatchObject({ ok: true });
    await untilIdle(pair().bridge);
    expect(sb.sandbox.ledger()).toHaveLength(1);
  });

  it("create with exactly the Generic provider's parameters and no service_identifier: the bridge derives one, returns it, and a repeat buys nothing", async () => {
    const { sb } = pair();
    // CreateParams when the contract has no service id up-front: nulls are left out of the form (http_build_query).
    const params = { customer_name: "Bo Example", customer_email: "Bo@Example.com", service_identifier: null, package_identifier: "12", ip: "203.0.113.91", billing_cycle_months: 1, extra: {} };
    const first = await upmind(config(), "create", params);
    expect(first).toEqual({ ok: true, result: { license_key: expect.stringMatching(/^lb_/), service_identifier: expect.stringMatching(/^auto-[0-9a-f]{32}$/), package_identifier: "12" } });
    if (!first.ok) return;
    const again = await upmind(config(), "create", { ...params, customer_email: "bo@example.com" });
    expect(again).toEqual(first);
    await untilIdle(pair().bridge);
    expect(sb.sandbox.ledger()).toHaveLength(1);
    expect(await row(pair(), String(first.result.service_identifier))).toMatchObject({ status: "active", ip: "203.0.113.91", customer_email: "Bo@Example.com" });
  });

  it("a function left off in the settings fails in Upmind without calling the bridge", async () => {
    const off = readmeConfiguration(pair().bridge.url, { has_suspension: false });
    expect(await upmind(off, "suspend", { license_key: "lb_x" })).toEqual({ ok: false, error: "No suspend endpoint set in this configuration" });
    expect(pair().sb.sandbox.requests()).toEqual([]);
  });
});

describe("Upmind's Generic provider when the bridge answers 202 pending (PROVISION_WAIT_SECONDS=1)", () => {
  const pair = usePair({ env: { PROVISION_WAIT_SECONDS: "1" } });
  const config = () => readmeConfiguration(pair().bridge.url);

  it("a pending create is a failure in Upmind (503 with Retry-After), never a licence recorded before it is bought; run again, it succeeds, bought once", async () => {
    const { sb, bridge } = pair();
    sb.sandbox.setFaults({ holdMs: 3_000, holdNext: 1 });
    const wire: Wire[] = [];
    const created = await upmind(config(), "create", createParams(), wire);
    expect(wire).toMatchObject([{ status: 503 }]);
    expect(created).toEqual({ ok: false, error: "Service error: 503 Service Unavailable" });
    expect((await row(pair(), "upmind-cp-1001"))?.status).not.toBe("active");
    await waitStatus(bridge, "upmind-cp-1001", "active");
    expect(await upmind(config(), "create", createParams())).toMatchObject({ ok: true, result: { license_key: expect.stringMatching(/^lb_/) } });
    expect(sb.sandbox.ledger()).toHaveLength(1);
  });

  it("without on_pending=error the bridge answers the contract's 202 pending, with the license_key", async () => {
    const { sb, bridge } = pair();
    sb.sandbox.setFaults({ holdMs: 3_000, holdNext: 1 });
    const r = await bridge.provision("create", { service_identifier: "plain-202", package_identifier: "12", ip: "203.0.113.92" });
    expect(r).toEqual({ status: 202, body: { success: false, status: "pending", license_key: expect.stringMatching(/^lb_/), message: expect.any(String) } });
    await waitStatus(bridge, "plain-202", "active");
    expect(sb.sandbox.ledger()).toHaveLength(1);
  });

  it("a pending suspend fails in Upmind (503), and running it again later succeeds", async () => {
    const { sb, bridge } = pair();
    const created = await upmind(config(), "create", createParams());
    const license_key = keyOf(created);
    sb.sandbox.setFaults({ holdMs: 3_000, holdNext: 1 });
    const wire: Wire[] = [];
    expect(await upmind(config(), "suspend", { license_key }, wire)).toEqual({ ok: false, error: "Service error: 503 Service Unavailable" });
    expect(wire).toMatchObject([{ status: 503 }]);
    await waitStatus(bridge, "upmind-cp-1001", "suspended");
    expect(await upmind(config(), "suspend", { license_key })).toEqual({ ok: true, result: {} });
  });
});
