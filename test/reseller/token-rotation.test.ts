import { afterEach, describe, expect, it } from "vitest";
import { createV1Client } from "../../src/reseller/v1.js";
import { createV2Client } from "../../src/reseller/v2.js";
import { json, startTinyServer, type TinyServer } from "./helpers.js";

/** SIGHUP after the reseller's token was rotated: the clients send the new one from the next call on. */

describe("a reseller client given a new token", () => {
  let server: TinyServer | undefined;
  afterEach(() => server?.close());

  it("v1 sends it as the bearer from the next call on", async () => {
    server = await startTinyServer((_req, res) => json(res, 200, { licenses: [] }));
    const client = createV1Client({ baseUrl: `${server.url}/api/v1`, token: "old-token-0123456789" });
    await client.listLicenses();
    client.setToken("new-token-9876543210");
    await client.listLicenses();
    expect(server.requests.map((r) => r.headers.authorization)).toEqual(["Bearer old-token-0123456789", "Bearer new-token-9876543210"]);
    await client.close();
  });

  it("v2 sends it as the token parameter from the next call on", async () => {
    server = await startTinyServer((_req, res) => json(res, 200, { ok: "True", message: "done" }));
    const client = createV2Client({ baseUrl: server.url, token: "old-legacy-token-01" });
    await client.renew({ ip: "203.0.113.5", type: "cpanel", billingcycle: 1 });
    client.setToken("new-legacy-token-02");
    await client.renew({ ip: "203.0.113.5", type: "cpanel", billingcycle: 1 });
    expect(server.requests.map((r) => new URL(r.url, server!.url).searchParams.get("token"))).toEqual(["old-legacy-token-01", "new-legacy-token-02"]);
    await client.close();
  });
});
