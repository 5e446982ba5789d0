import { Writable } from "node:stream";
import express from "express";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/http/app.js";
import { loggablePath } from "../../src/http/loggable-path.js";
import { createLogger } from "../../src/log/logger.js";

const TOKEN = "blesta-token-that-must-never-be-logged-0123456789";

function capturingApp(routers: express.Router[] = []) {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const app = createApp({ logger: createLogger({ level: "info", destination, pretty: false }), routers });
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
});
