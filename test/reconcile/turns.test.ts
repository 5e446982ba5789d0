import { describe, expect, it } from "vitest";
import { match, reconcile, unaccounted, type ReconcileDeps } from "../../src/reconcile/reconcile.js";
import type { ListedLicense } from "../../src/reseller/answers.js";
import type { ServiceBrief, Store } from "../../src/store/store.js";
import { row } from "../intake/fixtures.js";

const N = 50_000;
const ip = (i: number) => `198.${18 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;

/** A book of N cPanel services; the reseller holds each one's licence but every tenth, plus 5,000 it does not know and a free companion on every tenth. */
function book(): { services: ServiceBrief[]; licenses: ListedLicense[] } {
  const services: ServiceBrief[] = Array.from({ length: N }, (_, i) => row(i % 7 === 0 ? "terminated" : "active", { service_id: `s${i}`, ip: ip(i) }));
  const licenses: ListedLicense[] = [];
  for (let i = 0; i < N; i++) {
    if (i % 10 !== 3) licenses.push({ ip: ip(i), type: "cpanel", status: "active" });
    if (i % 10 === 1) licenses.push({ ip: ip(i), type: "whmsonic", free: true });
  }
  for (let i = 0; i < N / 10; i++) licenses.push({ ip: ip(N + i), type: "cpanel", status: "active" });
  return { services, licenses };
}

/** What reconcile reads, over `services` and `licenses` held in memory: the briefs a page at a time by id, the whole list. */
function inMemory(services: readonly ServiceBrief[], licenses: readonly ListedLicense[]): ReconcileDeps {
  const byId = [...services].sort((a, b) => (a.service_id < b.service_id ? -1 : 1));
  const next = new Map(byId.map((s, i) => [s.service_id, i + 1]));
  const briefs = async (after: string | undefined, limit: number) => {
    const from = after === undefined ? 0 : next.get(after)!;
    return byId.slice(from, from + limit);
  };
  return { store: { services: { briefs } } as unknown as Store, upstream: { listLicenses: async () => licenses } as unknown as ReconcileDeps["upstream"] };
}

/** Turns of the event loop taken while `work` runs: a chain of setImmediate counts them. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let running = true;
  const tick = () => {
    if (!running) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  const value = await work();
  running = false;
  return { value, turns };
}

// A book of 100,000 licences held the event loop up to 280 ms in one stretch (bench:scale's
// /healthz probe during a reconcile): every pass over the book now lets the loop run between
// turns of a few thousand items. Counted, not timed: each of match's six passes over 50,000
// items (the list, the services, their slots, three pairing steps) and unaccounted's three
// give way at least four times.
describe("reconcile and the adoption plan over a large book let the event loop run", () => {
  it("match pairs in turns: every service with a licence at its IP, the rest missing", async () => {
    const { services, licenses } = book();
    const { value, turns } = await turnsDuring(() => match(services, licenses));
    expect(turns).toBeGreaterThanOrEqual(6 * 4);
    const paired = value.slots.filter((s) => s.license);
    expect(paired).toHaveLength(N - N / 10);
    expect(paired.every((s) => s.license!.ip === s.svc.ip && s.how === "ip")).toBe(true);
  });

  it("unaccounted finds the licences no service holds in turns, free companions of held cPanel licences excepted", async () => {
    const { services, licenses } = book();
    const { slots, claimed } = await match(services, licenses);
    const { value, turns } = await turnsDuring(() => unaccounted(services, slots, licenses, claimed));
    expect(turns).toBeGreaterThanOrEqual(3 * 4);
    expect(value).toHaveLength(N / 10);
    const held = new Set(services.map((s) => s.ip));
    expect(value.every((l) => l.type === "cpanel" && !held.has(l.ip))).toBe(true);
  });

  // The API and the console ask without a progress callback, where "++done" in its argument was
  // never evaluated: the count stayed 0, and reconcile gave way after every service, not every
  // TURN of them (50,304 turns over this book, against 329 with a callback).
  it("reconcile compares in the same turns whether or not it is given a progress callback", async () => {
    const { services, licenses } = book();
    const deps = inMemory(services, licenses);
    const watched = await turnsDuring(() => reconcile(deps, { onProgress: () => {} }));
    const unwatched = await turnsDuring(() => reconcile(deps));

    expect(unwatched.value).toEqual(watched.value);
    expect(unwatched.turns).toBe(watched.turns);
  });
});
