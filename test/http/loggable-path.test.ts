import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import express from "express";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { createApp } from "../../src/http/app.js";
import { loggablePath } from "../../src/http/loggable-path.js";
import { createLogger } from "../../src/log/logger.js";
import { rawRequest } from "../helpers/raw-http.js";

const TOKEN = "blesta-token-that-must-never-be-logged-0123456789";

function capturingApp(routers: express.Router[] = [], secrets: readonly string[] = [], secretDigests: readonly string[] = []) {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const app = createApp({ logger: createLogger({ level: "trace", destination, pretty: false }), routers, secrets, secretDigests });
  return { app, log: () => lines.join("") };
}

describe("paths in log lines", () => {
  it("mask the Blesta token and drop the query string", () => {
    expect(loggablePath(`/webhooks/blesta/${TOKEN}?x=1`)).toBe("/webhooks/blesta/[token]");
    expect(loggablePath("/admin/licenses?status=active")).toBe("/admin/licenses");
  });

  it("mask the Blesta token whatever the letter case of the path, as Express routes it", () => {
    for (const prefix of ["/Webhooks/Blesta/", "/WEBHOOKS/BLESTA/", "/webhooks/BLESTA/", "/wEbHoOkS/bLeStA/"]) {
      expect(loggablePath(`${prefix}${TOKEN}`)).toBe(`${prefix}[token]`);
      expect(loggablePath(`${prefix}${TOKEN}/`)).toBe(`${prefix}[token]/`);
    }
  });

  it("mask the Blesta token in an absolute-form request target, which Express routes too", () => {
    expect(loggablePath(`http://bridge.example:8080/Webhooks/Blesta/${TOKEN}?x=1`)).toBe("/Webhooks/Blesta/[token]");
  });

  /** Every character as %XX: what a client that over-encodes sends. */
  const encoded = (s: string) => [...s].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`).join("");

  // Spellings that miss the route (404) or reach it, each as it must be logged: the spelling
  // kept, so an operator sees what the panel sent, and every segment after "blesta" masked.
  it.each([
    [`//webhooks/blesta/${TOKEN}`, "//webhooks/blesta/[token]"],
    [`/webhooks/./blesta/${TOKEN}`, "/webhooks/./blesta/[token]"],
    [`/webhooks%2fblesta/${TOKEN}`, "/webhooks%2fblesta/[token]"],
    [`/webhooks%2Fblesta/${TOKEN}`, "/webhooks%2Fblesta/[token]"],
    [`/webhooks/blesta/../blesta/${TOKEN}`, "/webhooks/blesta/../blesta/[token]"],
    [`/webhooks/blesta/%2e%2E/blesta/${TOKEN}`, "/webhooks/blesta/%2e%2E/blesta/[token]"],
    [`/webhooks/blesta/${TOKEN}/..`, "/webhooks/blesta/[token]/.."],
    [`/webhooks/blesta/../${TOKEN}`, "/webhooks/blesta/../[token]"],
    [`/webhooks/blesta//${TOKEN}`, "/webhooks/blesta//[token]"],
    [`/webhooks\\blesta\\${TOKEN}`, "/webhooks\\blesta\\[token]"],
    [`/webhooks/blesta\\${TOKEN}`, "/webhooks/blesta\\[token]"],
    [`/webhooks/blesta/${TOKEN};jsessionid=1`, "/webhooks/blesta/[token]"],
    [`/webhooks/blesta;v=1/${TOKEN}`, "/webhooks/[token]/[token]"],
    [`/webhooks/blesta;${TOKEN}`, "/webhooks/[token]"],
    [`/webhooks/%62lesta/${TOKEN}`, "/webhooks/%62lesta/[token]"],
    [`/webhooks/%2562LESTA/${TOKEN}`, "/webhooks/%2562LESTA/[token]"],
    [`/webhooks/blesta/${encoded(TOKEN)}`, "/webhooks/blesta/[token]"],
    [`/webhooks/blesta/${TOKEN}%`, "/webhooks/blesta/[token]"],
    [`/webhooks/blesta%2f${TOKEN}`, "/webhooks/[token]"],
    [`/webhooks%2Fblesta%2F${TOKEN}`, "/[token]"],
    [`/webhooks/blesta/${TOKEN}/extra`, "/webhooks/blesta/[token]/[token]"],
    [`/webhooks/blesta/${TOKEN}#fragment`, "/webhooks/blesta/[token]"],
    [`/bridge/webhooks/blesta/${TOKEN}`, "/bridge/webhooks/blesta/[token]"],
    [`HTTP://bridge.example//webhooks/blesta/${TOKEN}`, "//webhooks/blesta/[token]"],
    [`http://bridge.example\\webhooks\\blesta\\${TOKEN}`, "\\webhooks\\blesta\\[token]"],
    [`http://user:${TOKEN}@bridge.example/webhooks/billing`, "/webhooks/billing"],
  ])("mask the Blesta token in %s", (target, logged) => {
    expect(loggablePath(target)).toBe(logged);
  });

  it("leave paths without a Blesta segment as they are, less the query", () => {
    for (const path of ["/", "/webhooks/billing", "/admin/services/svc-1", "/provision/v1/create", "/webhooks/blesta", "/webhooks/blesta/", "//admin//jobs"]) {
      expect(loggablePath(path)).toBe(path);
      expect(loggablePath(`${path}?token=${TOKEN}`)).toBe(path);
    }
  });

  it("mask any segment that holds a configured secret, in any encoding, wherever it is", () => {
    const secrets = [TOKEN, "admin-token-0123456789"];
    expect(loggablePath(`/${TOKEN}`, secrets)).toBe("/[redacted]");
    expect(loggablePath(`/x${TOKEN}y/admin`, secrets)).toBe("/[redacted]/admin");
    expect(loggablePath(`/admin/${encoded("admin-token-0123456789")}/licenses`, secrets)).toBe("/admin/[redacted]/licenses");
    expect(loggablePath(`/${TOKEN}/../webhooks/blesta/x`, secrets)).toBe("/[redacted]/../webhooks/blesta/[token]");
  });

  it("mask the whole path when a configured secret spans segments", () => {
    expect(loggablePath("/a/secret/with/slashes/b", ["secret/with/slashes"])).toBe("[redacted]");
    expect(loggablePath("/a/secret%2Fwith%2fslashes/b", ["secret/with/slashes"])).toBe("/a/[redacted]/b");
  });

  it("ignore configured secrets too short to tell from ordinary words", () => {
    expect(loggablePath("/admin/licenses", ["admin", ""])).toBe("/admin/licenses");
  });

  it("never let any 12 characters of the token through, whatever the spelling", () => {
    const windows = Array.from({ length: TOKEN.length - 11 }, (_, i) => TOKEN.slice(i, i + 12).toLowerCase());
    const tails = [TOKEN, encoded(TOKEN), TOKEN.toUpperCase(), `${TOKEN};x`, `${TOKEN}%`, `x/../${TOKEN}`, `%2e/${TOKEN}`];
    const heads = ["/webhooks/blesta/", "//webhooks/blesta/", "/webhooks/./blesta/", "/webhooks%2fblesta/", "/webhooks/blesta/../blesta/", "/webhooks\\blesta\\", "/Webhooks/BLESTA//", "http://h/webhooks/blesta/", "/webhooks/blesta%2F", "/blesta;x/"];
    for (const head of heads) {
      for (const tail of tails) {
        const logged = loggablePath(head + tail).toLowerCase();
        for (const w of windows) expect(logged.includes(w), `${head}${tail} -> ${logged}`).toBe(false);
      }
    }
  });

  it("a request to a mixed-case Blesta path, which the route answers, logs no token", async () => {
    const router = express.Router();
    router.post("/webhooks/blesta/:token", (_req, res) => void res.status(202).json({ status: "accepted" }));
    const { app, log } = capturingApp([router]);
    await request(app).post(`/Webhooks/Blesta/${TOKEN}`).expect(202);
    const line = JSON.parse(log().trim().split("\n").at(-1)!) as { msg: string; path: string; status: number };
    expect(line).toMatchObject({ msg: "request", path: "/Webhooks/Blesta/[token]", status: 202 });
    expect(log()).not.toContain(TOKEN);
  });

  it("a request to the Blesta path that ends in a 404 logs no token", async () => {
    const { app, log } = capturingApp();
    await request(app).get(`/webhooks/blesta/${TOKEN}`).expect(404);
    expect(log()).toContain("/webhooks/blesta/[token]");
    expect(log()).not.toContain(TOKEN);
  });

  it("an unexpected error on the Blesta path logs no token", async () => {
    const router = express.Router();
    router.post("/webhooks/blesta/:token", () => {
      throw new Error("database is locked");
    });
    const { app, log } = capturingApp([router]);
    await request(app).post(`/webhooks/blesta/${TOKEN}`).expect(500);
    expect(log()).toContain("unhandled error");
    expect(log()).not.toContain(TOKEN);
  });

  it("a malformed percent-encoding in the token is refused without echoing the token, in the answer or the log", async () => {
    const router = express.Router();
    router.post("/webhooks/blesta/:token", (_req, res) => void res.status(202).json({ status: "accepted" }));
    const { app, log } = capturingApp([router]);
    const server = app.listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    try {
      const answer = await rawRequest(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, `/webhooks/blesta/${TOKEN}%`);
      expect(answer.status).toBe(400);
      expect(answer.text).toContain('"code":"bad_request"');
      expect(answer.text).not.toContain(TOKEN);
      expect(log()).not.toContain(TOKEN);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it("a configured secret in X-Request-Id or Webhook-Id is not logged", async () => {
    const router = express.Router();
    router.post("/webhooks/billing", (_req, res) => void res.status(202).json({ status: "accepted" }));
    const { app, log } = capturingApp([router], [TOKEN]);
    const res = await request(app).post("/webhooks/billing").set("x-request-id", TOKEN).set("webhook-id", `msg_${TOKEN}`).expect(202);
    expect(res.headers["x-request-id"]).not.toContain(TOKEN);
    expect(log()).toContain('"webhook_id":"[redacted]"');
    expect(log()).not.toContain(TOKEN);
  });

  describe("an operator's token, which OPERATORS_FILE knows only by its SHA-256", () => {
    const OPERATOR = "Op3rator+tok/en=0123";
    const digestOf = (token: string) => createHash("sha256").update(token).digest("hex");
    const digests = new Set([digestOf(OPERATOR)]);

    it("is masked as a segment, in any encoding and with path parameters", () => {
      expect(loggablePath(`/admin/services/${OPERATOR.replace("/", "%2F")}`, [], digests)).toBe("/admin/services/[redacted]");
      expect(loggablePath(`/admin/services/${encoded(OPERATOR)}/history?limit=1`, [], digests)).toBe("/admin/services/[redacted]/history");
      expect(loggablePath(`/admin/services/${encodeURIComponent(encodeURIComponent(OPERATOR))};v=1`, [], digests)).toBe("/admin/services/[redacted]");
    });

    it("masks the whole path when the token's slash spans two segments, as written or once decoded", () => {
      expect(loggablePath(`/x%2F${encodeURIComponent(OPERATOR)}/y`, [], digests)).toBe("[redacted]");
      expect(loggablePath(`/admin/services/${OPERATOR}/history`, [], digests)).toBe("[redacted]");
      expect(loggablePath(`//admin//services//${OPERATOR.replace("/", "//")}`, [], digests)).toBe("[redacted]");
      // Base64 may begin or end with a slash, or hold two in a row.
      for (const token of ["/Leading-slash+token=", "trailing-slash+token/", "two//slashes+token="]) {
        expect(loggablePath(`/admin/services/${token}`, [], new Set([digestOf(token)])), token).toBe("[redacted]");
      }
    });

    it("leaves every other path as it was, another letter case of the token included", () => {
      expect(loggablePath("/admin/services/4711/history", [], digests)).toBe("/admin/services/4711/history");
      expect(loggablePath(`/admin/services/${encodeURIComponent(OPERATOR.toLowerCase())}`, [], digests)).toBe(`/admin/services/${encodeURIComponent(OPERATOR.toLowerCase())}`);
    });

    it("masks a path of more segments than any route has rather than hash it run by run", () => {
      expect(loggablePath(`/${"a/".repeat(100)}`, [], digests)).toBe("[redacted]");
      expect(loggablePath(`/${"a/".repeat(100)}`)).toBe(`/${"a/".repeat(100)}`);
    });

    it("is not in the request line or the error handler's, nor echoed as X-Request-Id", async () => {
      const router = express.Router();
      router.get("/admin/services/:id", () => {
        throw new Error("database is locked");
      });
      const id = encodeURIComponent(OPERATOR);
      const { app, log } = capturingApp([router], [], [...digests]);
      const res = await request(app).get(`/admin/services/${id}`).set("x-request-id", "Op3rator-token-as-an-id").expect(500);
      const { app: other, log: otherLog } = capturingApp([], [], [createHash("sha256").update("Op3rator-token-as-an-id").digest("hex")]);
      const echoed = await request(other).get("/x").set("x-request-id", "Op3rator-token-as-an-id").set("webhook-id", "Op3rator-token-as-an-id");
      expect(log()).toContain("unhandled error");
      expect(log()).toContain('"path":"/admin/services/[redacted]"');
      expect(log()).not.toContain(id);
      expect(res.headers["x-request-id"]).toBe("Op3rator-token-as-an-id");
      expect(echoed.headers["x-request-id"]).not.toBe("Op3rator-token-as-an-id");
      expect(otherLog()).toContain('"webhook_id":"[redacted]"');
      expect(otherLog()).not.toContain("Op3rator-token-as-an-id");
    });
  });
});
