import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { BALANCE_TTL_MS, createBalanceReader, NO_ACCOUNT_ID } from "../../src/reseller/balance.js";
import { ForbiddenError, NotFoundError, UnauthorizedError, UnexpectedAnswerError, UpstreamUnavailableError } from "../../src/reseller/errors.js";
import { createV1Client, type BalanceAnswer } from "../../src/reseller/v1.js";

/** A client whose answers the test hands out, counting the calls and the ids asked for. */
function fakeClient(answer: (n: number) => Promise<BalanceAnswer> | BalanceAnswer) {
  const ids: (string | number)[] = [];
  return {
    ids,
    resellerBalance: async (id: string | number) => {
      ids.push(id);
      return answer(ids.length);
    },
  };
}

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe("the reseller balance reader", () => {
  it("asks once, keeps the reading for the TTL, and asks again after it", async () => {
    const clock = manualClock();
    const client = fakeClient((n) => ({ balance: 100 - n, raw: {} }));
    const reader = createBalanceReader({ client, accountId: "7", clock });

    expect(await reader.read()).toEqual({ balance: 99, checkedAt: clock.now(), reason: null });
    clock.advance(BALANCE_TTL_MS - 1);
    expect((await reader.read()).balance).toBe(99);
    expect(client.ids).toEqual(["7"]);

    clock.advance(1);
    expect(await reader.read()).toEqual({ balance: 98, checkedAt: clock.now(), reason: null });
    expect(client.ids).toEqual(["7", "7"]);
  });

  it("asks again within the TTL when asked for a fresh reading", async () => {
    const client = fakeClient((n) => ({ balance: n, raw: {} }));
    const reader = createBalanceReader({ client, accountId: "7", clock: manualClock() });
    expect((await reader.read()).balance).toBe(1);
    expect((await reader.read({ fresh: true })).balance).toBe(2);
    expect((await reader.read()).balance).toBe(2);
    expect(client.ids).toHaveLength(2);
  });

  it("shares one call between reads made while it is under way", async () => {
    const answer = deferred<BalanceAnswer>();
    const client = fakeClient(() => answer.promise);
    const reader = createBalanceReader({ client, accountId: "7", clock: manualClock() });
    const reads = [reader.read(), reader.read(), reader.read({ fresh: true })];
    answer.resolve({ balance: 5, raw: {} });
    expect((await Promise.all(reads)).map((r) => r.balance)).toEqual([5, 5, 5]);
    expect(client.ids).toHaveLength(1);
  });

  it("without an account id asks nothing and says why", async () => {
    const client = fakeClient(() => ({ balance: 1, raw: {} }));
    const reader = createBalanceReader({ client, accountId: undefined });
    expect(await reader.read({ fresh: true })).toEqual({ balance: null, checkedAt: null, reason: NO_ACCOUNT_ID });
    expect(NO_ACCOUNT_ID).toMatch(/^RESELLER_ACCOUNT_ID is not set/);
    expect(client.ids).toEqual([]);
  });

  it("never throws: each failure is a reading with no balance and a reason saying what to fix", async () => {
    const cases: [unknown, RegExp][] = [
      [new ForbiddenError({ operation: "v1.resellerBalance", status: 403, upstreamMessage: "Forbidden" }), /^the token lacks the admin role: .*403.*RESELLER_ADMIN_TOKEN/],
      [new UnauthorizedError({ operation: "v1.resellerBalance", status: 401 }), /rejected the token \(HTTP 401\).*lacks the admin role/],
      [new NotFoundError({ operation: "v1.resellerBalance", status: 404 }), /knows no account 7 .*RESELLER_ACCOUNT_ID/],
      [new UpstreamUnavailableError({ operation: "v1.resellerBalance", reason: "network", code: "ECONNREFUSED" }), /^the reseller is unreachable: .*ECONNREFUSED/],
      [new UnexpectedAnswerError({ operation: "v1.resellerBalance", status: 302 }), /could not be used/],
      [new TypeError("boom"), /could not read the balance: boom/],
    ];
    for (const [error, reason] of cases) {
      const clock = manualClock();
      const reader = createBalanceReader({ client: fakeClient(() => Promise.reject(error)), accountId: "7", clock });
      const reading = await reader.read();
      expect(reading).toEqual({ balance: null, checkedAt: clock.now(), reason: expect.stringMatching(reason) });
    }
  });

  it("an answer without a balance is a reason, not a 0", async () => {
    const reader = createBalanceReader({ client: fakeClient(() => ({ raw: { success: true } })), accountId: "7" });
    expect(await reader.read()).toMatchObject({ balance: null, reason: expect.stringMatching(/answered without a balance/) });
  });

  it("a failure is kept for the TTL too, and a later success replaces it", async () => {
    const clock = manualClock();
    const client = fakeClient((n) => (n === 1 ? Promise.reject(new UpstreamUnavailableError({ operation: "v1.resellerBalance", reason: "timeout" })) : { balance: 40, raw: {} }));
    const reader = createBalanceReader({ client, accountId: "7", clock });
    expect((await reader.read()).reason).toMatch(/unreachable/);
    expect((await reader.read()).reason).toMatch(/unreachable/);
    expect(client.ids).toHaveLength(1);
    clock.advance(BALANCE_TTL_MS);
    expect(await reader.read()).toMatchObject({ balance: 40, reason: null });
  });

  it("with waitMs, a slow answer is not waited for past it: the reading before, then the answer when it comes", async () => {
    const clock = manualClock();
    const slow = deferred<BalanceAnswer>();
    const client = fakeClient((n) => (n === 1 ? { balance: 10, raw: {} } : slow.promise));
    const reader = createBalanceReader({ client, accountId: "7", clock });
    const first = await reader.read();
    clock.advance(BALANCE_TTL_MS);

    expect(await reader.read({ waitMs: 20 })).toEqual(first);
    slow.resolve({ balance: 11, raw: {} });
    expect((await reader.read({ waitMs: 20 })).balance).toBe(11);
    expect(client.ids).toHaveLength(2);
  });

  it("reads the answer as liberally as the client does: a number or decimal text, at the top, under data, or one level inside it", async () => {
    let body: unknown;
    const server = createServer((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body)));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const client = createV1Client({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`, token: "t", retry: { maxRetries: 0 } });
    try {
      const cases: [unknown, number | null][] = [
        [{ balance: 12.5 }, 12.5],
        [{ success: true, data: { id: 7, balance: "980.25" } }, 980.25],
        [{ data: { reseller: { balance: 3 } } }, 3],
        [{ success: true, data: { id: 7 } }, null],
        [{ balance: "lots" }, null],
      ];
      for (const [answer, balance] of cases) {
        body = answer;
        const reading = await createBalanceReader({ client, accountId: "7" }).read();
        expect({ answer, balance: reading.balance, known: reading.reason === null }).toEqual({ answer, balance, known: balance !== null });
      }
    } finally {
      await client.close();
      await new Promise((r) => server.close(r));
    }
  });
});
