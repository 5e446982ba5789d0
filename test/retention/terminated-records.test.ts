import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { createdEvent, serviceEvent, type TestBridge } from "../helpers/bridge.js";
import { untilIdle, usePairInTest, waitStatus } from "../helpers/e2e-harness.js";
import { purchases } from "../reconcile/helpers.js";

const DAY = 86_400_000;

/**
 * TERMINATED_RETENTION_DAYS on a running bridge (both stores): a service terminated long enough
 * ago loses its records and keeps its row, and is decided as before when it is ordered again.
 */
describe("a terminated service's records", () => {
  const startPair = usePairInTest();

  /** An order carried out, then terminated; returns the service's id and the event sent. */
  async function orderedThenTerminated(b: TestBridge, clock: ReturnType<typeof manualClock>) {
    const event = createdEvent();
    expect((await b.send(event, { nowMs: clock.now() })).status).toBe(202);
    await waitStatus(b, event.service.id, "active");
    await untilIdle(b);
    expect((await b.send(serviceEvent("service.terminated", event.service.id), { nowMs: clock.now() })).status).toBe(202);
    await waitStatus(b, event.service.id, "terminated");
    await untilIdle(b);
    return event;
  }

  it("are pruned once it has been terminated longer than TERMINATED_RETENTION_DAYS: its row stays, and a new order buys it again", async () => {
    const clock = manualClock(Date.now());
    const { sb, bridge } = await startPair({ clock, env: { RETENTION_DAYS: "30", TERMINATED_RETENTION_DAYS: "60" } });
    const event = await orderedThenTerminated(bridge, clock);
    const id = event.service.id;
    // A live neighbour: nothing of it may go.
    const live = createdEvent();
    expect((await bridge.send(live, { nowMs: clock.now() })).status).toBe(202);
    await waitStatus(bridge, live.service.id, "active");
    await untilIdle(bridge);
    const liveHistory = await bridge.service.services.history(live.service.id);
    const before = await bridge.service.services.get(id);

    clock.advance(59 * DAY);
    expect(await bridge.service.prune()).toMatchObject({ terminated_services: 0 });
    expect((await bridge.service.services.history(id)).length).toBeGreaterThan(1);

    clock.advance(2 * DAY);
    expect(await bridge.service.prune({ dryRun: true })).toMatchObject({ dry_run: true, terminated_services: 1 });
    expect((await bridge.service.services.history(id)).length).toBeGreaterThan(1);
    expect(await bridge.service.prune()).toMatchObject({ dry_run: false, terminated_services: 1 });

    expect(await bridge.service.services.history(id)).toEqual([]);
    expect(await bridge.service.queue.list({ serviceId: id })).toEqual([]);
    expect(await bridge.service.services.get(id)).toMatchObject({ status: "terminated", ip: before!.ip, created_at: before!.created_at, updated_at: before!.updated_at });
    expect(await bridge.service.services.history(live.service.id)).toEqual(liveHistory);
    // Done once: the next day's prune finds nothing more of it.
    expect(await bridge.service.prune()).toMatchObject({ terminated_services: 0 });

    // Ordered again, as a terminated service is: bought again, and its new records are pruned in their turn.
    const bought = purchases(sb);
    expect((await bridge.send(event, { nowMs: clock.now() })).status).toBe(202);
    await waitStatus(bridge, id, "active");
    await untilIdle(bridge);
    expect(purchases(sb).charges).toBe(bought.charges + 1);
    expect((await bridge.send(serviceEvent("service.terminated", id), { nowMs: clock.now() })).status).toBe(202);
    await waitStatus(bridge, id, "terminated");
    await untilIdle(bridge);
    clock.advance(61 * DAY);
    expect(await bridge.service.prune()).toMatchObject({ terminated_services: 1 });
    expect(await bridge.service.services.history(id)).toEqual([]);
  });

  it("are kept for ever when TERMINATED_RETENTION_DAYS is unset", async () => {
    const clock = manualClock(Date.now());
    const { bridge } = await startPair({ clock });
    const event = await orderedThenTerminated(bridge, clock);
    const history = await bridge.service.services.history(event.service.id);
    clock.advance(3650 * DAY);
    expect(await bridge.service.prune()).toMatchObject({ terminated_services: 0 });
    expect(await bridge.service.services.history(event.service.id)).toEqual(history);
  });

  it("are kept while a job of the service is unfinished", async () => {
    const clock = manualClock(Date.now());
    const { bridge } = await startPair({ clock, env: { TERMINATED_RETENTION_DAYS: "30" } });
    const event = await orderedThenTerminated(bridge, clock);
    const id = event.service.id;
    // Due long after the prune: still queued when it runs.
    const late = await bridge.service.store.jobs.enqueue({ kind: "mail_install", serviceId: id, queueKey: `late:${id}`, delayMs: 400 * DAY });
    clock.advance(31 * DAY);
    expect(await bridge.service.prune()).toMatchObject({ terminated_services: 0 });
    expect(await bridge.service.queue.get(late.id)).toMatchObject({ state: "queued" });
    expect((await bridge.service.services.history(id)).length).toBeGreaterThan(1);
  });
});
