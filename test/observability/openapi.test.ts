import { describe, expect, it } from "vitest";
import { billingEventSchema } from "../../src/intake/event-schema.js";
import { createdEvent } from "../helpers/bridge.js";
import { usePairPerFile } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";

type Schema = Record<string, unknown>;
type OpenApi = { openapi: string; paths: Record<string, Record<string, Schema>>; components: { schemas: Record<string, Schema> } };

interface RouterLayer {
  rawPath?: unknown;
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle?: { stack?: RouterLayer[] };
}

/** Every method and path the Express 5 app routes, nested routers included, as `GET /admin/services/{id}`. */
function mountedRoutes(stack: RouterLayer[], prefix = ""): string[] {
  const out: string[] = [];
  for (const layer of stack) {
    if (layer.route) {
      const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
      for (const path of paths) {
        for (const method of Object.keys(layer.route.methods).filter((m) => m !== "_all")) {
          out.push(`${method.toUpperCase()} ${(prefix + path).replace(/:(\w+)/g, "{$1}")}`);
        }
      }
    } else if (layer.handle?.stack) {
      const mount = typeof layer.rawPath === "string" && layer.rawPath !== "/" ? layer.rawPath : "";
      out.push(...mountedRoutes(layer.handle.stack, prefix + mount));
    }
  }
  return out;
}

/** Enough of JSON Schema 2020-12 to see whether an instance fits the document's structure. */
function fits(doc: OpenApi, schema: Schema, value: unknown): boolean {
  if (typeof schema.$ref === "string") {
    return fits(doc, doc.components.schemas[schema.$ref.replace("#/components/schemas/", "")]!, value);
  }
  const typeOf = (v: unknown) =>
    v === null ? "null" : Array.isArray(v) ? "array" : typeof v === "number" && Number.isInteger(v) ? "integer" : typeof v;
  if (schema.type !== undefined) {
    const types = ([] as unknown[]).concat(schema.type);
    const t = typeOf(value);
    if (!types.includes(t) && !(t === "integer" && types.includes("number"))) return false;
  }
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) return false;
  if ("const" in schema && schema.const !== value) return false;
  if (Array.isArray(schema.anyOf) && !schema.anyOf.some((s: Schema) => fits(doc, s, value))) return false;
  if (Array.isArray(schema.allOf) && !schema.allOf.every((s: Schema) => fits(doc, s, value))) return false;
  if (typeof value === "string") {
    if (typeof schema.minLength === "number" && value.length < schema.minLength) return false;
    if (typeof schema.maxLength === "number" && value.length > schema.maxLength) return false;
    if (typeof schema.pattern === "string" && !new RegExp(schema.pattern, "u").test(value)) return false;
  }
  if (typeof value === "number") {
    if (typeof schema.minimum === "number" && value < schema.minimum) return false;
    if (typeof schema.maximum === "number" && value > schema.maximum) return false;
  }
  if (typeOf(value) === "object") {
    const obj = value as Record<string, unknown>;
    const props = (schema.properties ?? {}) as Record<string, Schema>;
    for (const key of (schema.required ?? []) as string[]) if (!(key in obj)) return false;
    for (const [key, v] of Object.entries(obj)) {
      if (props[key]) {
        if (!fits(doc, props[key], v)) return false;
      } else if (schema.additionalProperties === false) {
        return false;
      }
    }
  }
  if (Array.isArray(value) && schema.items) return value.every((v) => fits(doc, schema.items as Schema, v));
  return true;
}

describe("/openapi.json", () => {
  let doc: OpenApi;
  const pair = usePairPerFile({
    // Every panel adapter configured, so its route is mounted and must be documented too.
    env: {
      HOSTBILL_WEBHOOK_SECRET: "hostbill-secret-0123456789",
      UPMIND_WEBHOOK_SECRET: "upmind-secret-0123456789",
      BLESTA_WEBHOOK_TOKEN: "blesta-token-0123456789abcdef0123456789",
    },
    async setup({ bridge }) {
      const res = await fetch(`${bridge.url}/openapi.json`);
      expect(res.status).toBe(200);
      doc = (await res.json()) as OpenApi;
    },
  });

  it("is OpenAPI 3.1, served without auth", () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
  });

  it("documents every route the app mounts, and nothing it does not", () => {
    const { bridge } = pair();
    // The console's routes are HTML pages for a browser (section 11), not the API this document describes.
    const routes = mountedRoutes((bridge.service.app as unknown as { router: { stack: RouterLayer[] } }).router.stack).filter((r) => !/^\w+ \/console(\/|$)/.test(r));
    expect(routes).toEqual(
      expect.arrayContaining(["POST /webhooks/billing", "POST /webhooks/hostbill", "POST /webhooks/blesta/{token}", "GET /admin/services/{id}", "POST /admin/reconcile", "GET /readyz"]),
    );
    for (const route of routes) {
      const [method, path] = route.split(" ") as [string, string];
      expect(doc.paths[path]?.[method.toLowerCase()], `${route} is not in the document`).toBeDefined();
    }
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    expect(new Set(documented)).toEqual(new Set(routes));
  });

  it("marks the admin and provisioning APIs, and only them, as needing their bearer tokens", () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const op of Object.values(ops)) {
        if (path.startsWith("/admin/")) {
          expect(op.security).toEqual([{ adminToken: [] }]);
          expect((op.responses as Schema)["401"]).toBeDefined();
        } else if (path.startsWith("/provision/")) {
          expect(op.security).toEqual([{ provisioningToken: [] }]);
          expect((op.responses as Schema)["401"]).toBeDefined();
        } else {
          expect(op.security).toBeUndefined();
        }
      }
    }
  });

  it("documents the webhook's headers and every answer it gives", () => {
    const op = doc.paths["/webhooks/billing"]!.post!;
    const headers = (op.parameters as { name: string; in: string; required: boolean }[]).filter((p) => p.in === "header");
    expect(headers.map((h) => [h.name, h.required])).toEqual([
      ["webhook-id", true],
      ["webhook-timestamp", true],
      ["webhook-signature", true],
    ]);
    expect(Object.keys(op.responses as Schema).sort()).toEqual(["200", "202", "400", "401", "409", "413", "415", "422", "503"]);
  });

  it("its webhook body schema accepts and rejects what billingEventSchema does", () => {
    const body = ((doc.paths["/webhooks/billing"]!.post!.requestBody as Schema).content as Record<string, { schema: Schema }>)["application/json"]!.schema;
    const samples: unknown[] = [
      createdEvent(),
      { type: "service.suspended", service: { id: 4711 } },
      { type: "service.ip_changed", service: { id: "4711" }, changes: { ip: "2001:db8::1" } },
      { type: "service.exploded", service: { id: "4711" } },
      { type: "service.suspended" },
      { service: { id: "4711" } },
      { type: "service.suspended", service: { id: "" } },
      { type: "service.created", service: { ...createdEvent().service, ip: "not-an-ip" } },
      { type: "service.created", service: { ...createdEvent().service, billing_cycle: "fortnightly" } },
      "not an object",
    ];
    for (const sample of samples) {
      expect(fits(doc, body, sample), JSON.stringify(sample)).toBe(billingEventSchema.safeParse(sample).success);
    }
  });

  it("documents every provisioning call with GET and POST, its parameters and every answer", () => {
    for (const call of ["create", "suspend", "unsuspend", "terminate", "renew", "change-ip", "change-package", "info"]) {
      const path = doc.paths[`/provision/v1/${call}`]!;
      expect(Object.keys(path).sort(), call).toEqual(["get", "post"]);
      expect(Object.keys(path.post!.responses as Schema).sort(), call).toEqual(["200", "202", "400", "401", "404", "409", "413", "415", "422", "502", "503"]);
    }
    const create = (doc.paths["/provision/v1/create"]!.post!.requestBody as Schema).content as Record<string, { schema: Schema }>;
    expect(Object.keys(create).sort()).toEqual(["application/json", "application/x-www-form-urlencoded"]);
    expect(Object.keys(create["application/json"]!.schema.properties as Schema)).toEqual(
      expect.arrayContaining(["service_identifier", "package_identifier", "ip", "customer_email", "billing_cycle", "next_due_date"]),
    );
    const info = doc.paths["/provision/v1/info"]!.get!.parameters as { name: string; in: string }[];
    expect(info.map((p) => [p.name, p.in])).toEqual([
      ["license_key", "query"],
      ["service_identifier", "query"],
      ["on_pending", "query"],
    ]);
  });

  it("documents the stable error codes on every error answer", () => {
    const codes = (doc.components.schemas.Error!.properties as Record<string, Schema>).code!;
    expect(codes.enum).toEqual(expect.arrayContaining(["unauthorized", "validation", "unknown_service", "insufficient_balance", "ip_in_use"]));
    expect(doc.components.schemas.Error!.required).toEqual(expect.arrayContaining(["error", "code"]));
    expect(fits(doc, doc.components.schemas.ProvisionError!, { success: false, error: "x", code: "insufficient_balance", status: "blocked" })).toBe(true);
    expect(fits(doc, doc.components.schemas.ProvisionError!, { success: false, error: "x", code: "not-a-code" })).toBe(false);
  });

  it("takes the admin query parameters from the schemas that validate them", () => {
    const params = doc.paths["/admin/jobs"]!.get!.parameters as { name: string; in: string; schema: Schema }[];
    expect(params.map((p) => p.name)).toEqual(expect.arrayContaining(["state", "service_id"]));
    // "" is there because an empty filter is accepted and means no filter.
    expect(params.find((p) => p.name === "state")!.schema.enum).toEqual(["", "queued", "running", "succeeded", "failed", "blocked", "cancelled"]);
    const license = doc.paths["/admin/licenses"]!.get!.parameters as { name: string; schema: Schema }[];
    expect(license.find((p) => p.name === "status")!.schema.enum).toEqual(["", "pending", "active", "suspended", "terminated", "failed"]);
  });

  it("documents the answers the operator's job and licence actions give (cancel, resend the install mail, reset the IP changes)", async () => {
    const { bridge } = pair();
    const answerOf = (path: string, status: string) => {
      const content = ((doc.paths[path]!.post!.responses as Record<string, Schema>)[status]!.content as Record<string, { schema: Schema }>)["application/json"]!;
      return content.schema;
    };
    const order = createdEvent();
    expect((await bridge.send(order)).status).toBe(202);
    const id = order.service.id;
    await waitFor(async () => (await bridge.service.services.get(id))?.status === "active", 10_000, "the licence active");

    const resent = await bridge.admin(`/admin/services/${id}/resend-install-mail`, { method: "POST" });
    expect(resent.status).toBe(202);
    expect(fits(doc, answerOf("/admin/services/{id}/resend-install-mail", "202"), resent.body)).toBe(true);
    const reset = await bridge.admin(`/admin/services/${id}/reset-ip-changes`, { method: "POST" });
    expect(reset.status).toBe(200);
    expect(fits(doc, answerOf("/admin/services/{id}/reset-ip-changes", "200"), reset.body)).toBe(true);
    const refused = await bridge.admin(`/admin/services/${id}/resend-install-mail`, { method: "POST", body: JSON.stringify({ colour: "red" }) });
    expect(refused.status).toBe(422);
    expect(fits(doc, answerOf("/admin/services/{id}/resend-install-mail", "422"), refused.body)).toBe(true);
    const register = (await bridge.service.queue.list({ serviceId: id, kind: "register" }))[0]!;
    const notStopped = await bridge.admin(`/admin/jobs/${register.id}/cancel`, { method: "POST" });
    expect(notStopped.status).toBe(409);
    expect(fits(doc, answerOf("/admin/jobs/{id}/cancel", "409"), notStopped.body)).toBe(true);
    expect(Object.keys(doc.paths["/admin/jobs/{id}/cancel"]!.post!.responses as Schema).sort()).toEqual(["200", "401", "403", "404", "409", "422", "429"]);
  });
});
