import { Writable } from "node:stream";
import express from "express";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/http/app.js";
import { createLogger } from "../../src/log/logger.js";
import { configSchema } from "../../src/config/schema.js";

/** TRUST_PROXY: the request log names the client, as the socket sees it or as a trusted proxy says. */

function appLogging(trustProxy?: boolean | number | string[]) {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: "info", destination: new Writable({ write: (c: Buffer, _e, done) => (lines.push(JSON.parse(c.toString()) as Record<string, unknown>), done()) }) });
  const router = express.Router().get("/ping", (_req, res) => void res.json({ ok: true }));
  return { app: createApp({ logger, routers: [router], trustProxy }), lines };
}

describe("the client IP in request lines", () => {
  it("is the socket's peer when no proxy is trusted, whatever X-Forwarded-For claims", async () => {
    const { app, lines } = appLogging();
    await request(app).get("/ping").set("X-Forwarded-For", "198.51.100.7");
    expect(lines.find((l) => l.msg === "request")).toMatchObject({ client_ip: expect.stringMatching(/127\.0\.0\.1$/) });
  });

  it("is the address a trusted proxy (TRUST_PROXY=loopback) forwards", async () => {
    const { app, lines } = appLogging(configSchema.shape.TRUST_PROXY.parse("loopback"));
    await request(app).get("/ping").set("X-Forwarded-For", "203.0.113.9, 198.51.100.7");
    expect(lines.find((l) => l.msg === "request")).toMatchObject({ client_ip: "198.51.100.7" });
  });

  it("warns once, naming TRUST_PROXY, when a proxy forwards requests that no setting trusts: every client would then count as the proxy for the failed-token limit", async () => {
    const { app, lines } = appLogging();
    await request(app).get("/ping").set("X-Forwarded-For", "198.51.100.7");
    await request(app).get("/ping").set("X-Forwarded-For", "198.51.100.8");
    const warned = lines.filter((l) => l.level === 40 && String(l.msg).includes("TRUST_PROXY"));
    expect(warned).toHaveLength(1);
    expect(String(warned[0]!.msg)).toMatch(/failed-token limit/);
    expect(JSON.stringify(warned)).not.toContain("198.51.100.7");
  });

  it("says nothing of TRUST_PROXY when requests come without X-Forwarded-For, or through a trusted proxy", async () => {
    const plain = appLogging();
    await request(plain.app).get("/ping");
    const trusted = appLogging(configSchema.shape.TRUST_PROXY.parse("loopback"));
    await request(trusted.app).get("/ping").set("X-Forwarded-For", "198.51.100.7");
    expect([...plain.lines, ...trusted.lines].filter((l) => String(l.msg).includes("TRUST_PROXY"))).toEqual([]);
  });

  it("warns at start that TRUST_PROXY=true lets any client name its own address", () => {
    const { lines } = appLogging(true);
    expect(lines.filter((l) => l.level === 40 && String(l.msg).includes("TRUST_PROXY=true"))).toHaveLength(1);
  });

  it.each([
    ["true", true],
    ["2", 2],
    ["loopback, 10.0.0.0/8, 2001:db8::1", ["loopback", "10.0.0.0/8", "2001:db8::1"]],
  ])("TRUST_PROXY=%s is read as %j", (raw, value) => {
    expect(configSchema.shape.TRUST_PROXY.parse(raw)).toEqual(value);
  });

  it("a value that is no proxy setting is refused, naming it", () => {
    const r = configSchema.shape.TRUST_PROXY.safeParse("loopbak");
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.message).toContain('"loopbak"');
  });
});
