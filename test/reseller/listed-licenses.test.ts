import type { ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { listedOf, readLicenseList, readListedLicenses, type ListedLicense } from "../../src/reseller/answers.js";
import { parseListJson } from "../../src/reseller/list-json.js";
import { scrubInPlace } from "../../src/reseller/redact.js";
import { createV1Client } from "../../src/reseller/v1.js";
import { startTinyServer, type TinyServer } from "./helpers.js";

// The licence list as reconcile and the adoption plan read it (issue 25): compact records of the
// fields they compare, the rest of each item dropped as it is read. The answer is scrubbed of
// the token where it lies instead of being copied, so nothing may come through unscrubbed.

const TOKEN = "tok_SECRET_4711_abcdef";
let server: TinyServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A list answer written as text: an own "__proto__" key is what JSON.parse makes of it, not what a JavaScript literal would. */
function listAnswer(items: string[]): (req: unknown, res: ServerResponse) => void {
  return (_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(`{"success":true,"data":[${items.join(",")}]}`);
  };
}

const client = (url: string) => createV1Client({ baseUrl: `${url}/api/v1`, token: TOKEN });

describe("the licence list as compact records", () => {
  it("keeps the compared fields, read as the full list reads them, and drops every other key", async () => {
    const item = {
      ip: "2001:DB8::1",
      type: "litespeed",
      status: "active",
      expires_at: 1_893_456_000,
      variant: "litespeed8",
      free: "0",
      bundle_key: 42,
      billingcycle: "12",
      parent: "cpanel",
      key: "LIC-1",
      account_id: 7,
      notes: { long: "x".repeat(1000) },
    };
    server = await startTinyServer(listAnswer([JSON.stringify(item), JSON.stringify({ ip: "203.0.113.5" }), '"junk"']));

    const listed = await client(server.url).listedLicenses();
    const full = await client(server.url).listLicenses();

    expect(listed).toEqual([
      { ip: "2001:db8::1", type: "litespeed", status: "active", expires_at: "2030-01-01T00:00:00.000Z", variant: "litespeed8", free: false, bundle_key: "42" },
    ]);
    const { raw: _raw, billingcycle: _cycle, parent: _parent, ...compared } = full[0]!;
    expect(listed[0]).toEqual(compared);
  });

  it("never hands over the token, in a compared field, an unknown key or an own __proto__ key", async () => {
    server = await startTinyServer(
      listAnswer([`{"ip":"203.0.113.10","type":"cpanel","status":"suspended by ${TOKEN}","note":"${TOKEN}","__proto__":"${TOKEN}","nested":{"token":"t","deep":["${TOKEN}"]}}`]),
    );

    const listed = await client(server.url).listedLicenses();
    const full = await client(server.url).listLicenses();

    expect(listed).toEqual([{ ip: "203.0.113.10", type: "cpanel", status: "suspended by [redacted]" }]);
    const raw = full[0]!.raw;
    expect(JSON.stringify(Object.getOwnPropertyNames(raw).map((k) => [k, raw[k]]))).not.toContain(TOKEN);
    expect(raw).toMatchObject({ note: "[redacted]", nested: { token: "[redacted]", deep: ["[redacted]"] } });
    // The licences at one IP are made of the items as they are read, before the answer is scrubbed: scrubbed all the same.
    const at = await client(server.url).licensesAt("203.0.113.10");
    expect(at).toEqual(full);
    expect(JSON.stringify(Object.getOwnPropertyNames(at[0]!.raw).map((k) => [k, at[0]!.raw[k]]))).not.toContain(TOKEN);
  });

  it("scrubs a parsed body where it lies: the same objects, an own __proto__ key included", () => {
    const body = JSON.parse(`{"data":[{"a":"x ${TOKEN}","__proto__":"${TOKEN}","n":1,"b":null}]}`) as { data: Record<string, unknown>[] };
    const item = body.data[0]!;

    expect(scrubInPlace(body, [TOKEN])).toBe(body);
    expect(body.data[0]).toBe(item);
    expect(Object.getOwnPropertyDescriptor(item, "__proto__")?.value).toBe("[redacted]");
    expect(item).toMatchObject({ a: "x [redacted]", n: 1, b: null });
    expect(Object.getPrototypeOf(item)).toBe(Object.prototype);
  });
});

describe("the licence list read item by item", () => {
  const item = { ip: "203.0.113.10", type: "cpanel", status: "active", key: "LIC-1", notes: { a: [1, "]}"] } };
  const other = { ip: "203.0.113.11", type: "litespeed", variant: "litespeed8", free: 0 };
  const answer = (body: unknown) => ({ status: 200, body, isJson: true });
  /** The records of the list read item by item. */
  const listed = (text: string) => readListedLicenses("v1.listLicenses", answer(parseListJson(text, listedOf)));
  /** What the full reader makes of the whole parse, less what the records leave out. */
  const expected = (text: string): ListedLicense[] =>
    readLicenseList("v1.listLicenses", answer(JSON.parse(text))).map(({ raw: _raw, billingcycle: _cycle, parent: _parent, ...kept }) => kept);

  it.each([
    ["at the top level", [item, other, "junk", null]],
    ["under data", { success: true, message: "ok", data: [item, other] }],
    ["under licenses", { success: "1", licenses: [item, other], count: 2 }],
    ["under data.licenses", { data: { licenses: [other, item], total: 2 }, success: true }],
    ["under data.data", { data: { data: [item] } }],
    ["under data, licenses beside it", { licences: [other], data: [item] }],
    ["empty", { data: [] }],
  ])("gives the records JSON.parse would, %s", (_where, body) => {
    const text = JSON.stringify(body, null, 1);
    expect(listed(text)).toEqual(expected(text));
  });

  it("reads keys written with escapes, and brackets and quotes inside strings, as JSON.parse does", () => {
    const text = String.raw` { "d\u0061ta" :	[ {"ip":"203.0.113.10","type":"cpanel","status":"a\"]}\\","x":"{["} ] } `;
    expect(listed(text)).toEqual([{ ip: "203.0.113.10", type: "cpanel", status: 'a"]}\\' }]);
    expect(listed(text)).toEqual(expected(text));
  });

  it("reads every value beside the list as JSON.parse does, a __proto__ key and repeated keys included", () => {
    const text = '{"success":true,"error":{"code":0},"__proto__":{"x":1},"message":"a","message":"b","data":{"count":1e999,"licenses":[]}}';
    const parsed = parseListJson(text, listedOf) as Record<string, unknown>;
    const whole = JSON.parse(text) as Record<string, unknown>;
    expect(Object.getOwnPropertyNames(parsed)).toEqual(Object.getOwnPropertyNames(whole));
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(parsed, "__proto__")?.value).toEqual({ x: 1 });
    expect(parsed).toEqual(whole);
  });

  it.each([
    '{"data":[{"ip":"203.0.113.10","type":"cpanel"}',
    '{"data":[{"ip":"203.0.113.10","type":"cpanel"},]}',
    '{"data":[{"ip":"203.0.113.10","type":"cpanel"} {"ip":"203.0.113.11","type":"cpanel"}]}',
    '{"data":[{"ip":"203.0.113.10","type":"cpanel"]}',
    '{"data":[{"ip":"203.0.113.10,"type":"cpanel"}]}',
    '{"success":true,}',
    '{"success" true}',
    '{success:true}',
    '[] []',
    '[nul]',
    "",
  ])("throws where JSON.parse throws: %s", (text) => {
    expect(() => JSON.parse(text)).toThrow(SyntaxError);
    expect(() => parseListJson(text, listedOf)).toThrow(SyntaxError);
  });
});
