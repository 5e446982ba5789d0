import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import type { PruneReport } from "../../src/retention/retention.js";
import { createdEvent, startTestBridge, startTestSandbox, type TestBridge, type TestSandbox } from "../helpers/bridge.js";
import { untilIdle, waitStatus } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";
import { runCli } from "./helpers.js";

const DAY = 86_400_000;

/** `license-bridge prune [--dry-run]` beside a bridge whose order was taken 100 days ago (its clock set back). */
describe("prune command", () => {
  let sb: TestSandbox;
  let bridge: TestBridge;
  let outbox: string;
  let serviceId: string;

  beforeAll(async () => {
    sb = await startTestSandbox();
    const clock = manualClock(Date.now() - 100 * DAY);
    bridge = await startTestBridge(sb, { clock });
    const event = createdEvent();
    serviceId = event.service.id;
    expect((await bridge.send(event, { nowMs: clock.now() })).status).toBe(202);
    await waitStatus(bridge, serviceId, "active");
    await waitFor(async () => (await bridge.service.queue.list({ kind: "mail_install", state: "succeeded" })).length === 1, 10_000, "the install mail");
    await untilIdle(bridge);
    // The bridge's own file is stamped with the real time; one written long ago beside it.
    outbox = join(bridge.config.dataDir, "outbox");
    mkdirSync(outbox, { recursive: true });
    writeFileSync(join(outbox, "20200101T000000000Z-old-mail.eml"), "Subject: old\n\nold\n");
  });

  afterAll(async () => {
    await bridge?.close();
    await sb?.close();
  });

  it("--dry-run shows what would go and removes nothing", async () => {
    const run = await runCli(["prune", "--dry-run", "--json"], bridge.env);
    expect(run.code).toBe(0);
    expect(run.json<PruneReport>()).toMatchObject({ dry_run: true, retention_days: 90, jobs: 2, event_payloads: 1, mails: 1, outbox_files: 1 });
    expect(await bridge.service.store.counts()).toMatchObject({ jobs: 2, mails: 1 });
    expect(existsSync(join(outbox, "20200101T000000000Z-old-mail.eml"))).toBe(true);

    const human = await runCli(["prune", "--dry-run"], bridge.env);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/succeeded and cancelled jobs\s+2/);
    expect(human.stdout).toMatch(/would be pruned; run without --dry-run to prune/);
  });

  it("prunes, keeping the licence, its history and the fresh outbox file", async () => {
    const history = await bridge.service.services.history(serviceId);
    const run = await runCli(["prune", "--json"], bridge.env);
    expect(run.code).toBe(0);
    expect(run.json<PruneReport>()).toMatchObject({ dry_run: false, jobs: 2, event_payloads: 1, mails: 1, outbox_files: 1 });
    expect(await bridge.service.store.counts()).toMatchObject({ events: 1, jobs: 0, mails: 0 });
    expect(await bridge.service.services.history(serviceId)).toEqual(history);
    expect(readdirSync(outbox).filter((f) => f.endsWith(".eml"))).toHaveLength(1);

    const again = await runCli(["prune", "--json"], { ...bridge.env, RETENTION_DAYS: "1" });
    expect(again.json<PruneReport>()).toMatchObject({ retention_days: 1, jobs: 0, event_payloads: 0, mails: 0, outbox_files: 0 });

    // Each run that removed (not the dry runs) is in the audit trail, with what it removed and who ran it.
    const { entries } = await bridge.service.store.audit.list({ action: "prune" });
    expect(entries).toHaveLength(2);
    expect(entries.map((e) => e.outcome)).toEqual(["ok", "ok"]);
    expect(entries[1]!.actor).toMatch(/^cli:/);
    expect(entries[1]!.detail).toMatch(/2 job\(s\), 1 event payload\(s\), 1 mail record\(s\), 1 outbox file\(s\); via the CLI/);
  });

  it("prunes audit entries older than AUDIT_RETENTION_DAYS and says how many", async () => {
    // Written on the bridge's clock, 100 days ago.
    await bridge.service.store.audit.record({ actor: "alice", action: "service.suspend", service_id: serviceId, outcome: "refused", detail: "a viewer may not" });
    const env = { ...bridge.env, AUDIT_RETENTION_DAYS: "30" };
    const dry = await runCli(["prune", "--dry-run", "--json"], env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.json<PruneReport>()).toMatchObject({ dry_run: true, audit_retention_days: 30, audit_entries: 1 });
    const human = await runCli(["prune", "--dry-run"], env);
    expect(human.stdout).toMatch(/audit entries older than \S+ \(AUDIT_RETENTION_DAYS=30\)\s+1/);

    const run = await runCli(["prune", "--json"], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json<PruneReport>()).toMatchObject({ dry_run: false, audit_entries: 1 });
    expect((await bridge.service.store.audit.list({ action: "service.suspend" })).total).toBe(0);
    // The run's own entry says what it removed.
    const [latest] = (await bridge.service.store.audit.list({ action: "prune" })).entries;
    expect(latest!.detail).toMatch(/1 audit entr/);
  });

  it("refuses a bad RETENTION_DAYS or AUDIT_RETENTION_DAYS with exit code 78", async () => {
    const run = await runCli(["prune", "--dry-run"], { ...bridge.env, RETENTION_DAYS: "0" });
    expect(run.code).toBe(78);
    expect(run.stderr).toMatch(/RETENTION_DAYS/);
    const audit = await runCli(["prune", "--dry-run"], { ...bridge.env, AUDIT_RETENTION_DAYS: "0" });
    expect(audit.code).toBe(78);
    expect(audit.stderr).toMatch(/AUDIT_RETENTION_DAYS/);
  });
});
