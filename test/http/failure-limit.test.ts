import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { clientOf, FAILURE_WINDOW_MS, failureLimit } from "../../src/http/failure-limit.js";

describe("the client a failed token is counted against", () => {
  it("is an IPv4 address, also when the socket spells it as IPv4-mapped IPv6", () => {
    expect(clientOf("203.0.113.7")).toBe("203.0.113.7");
    expect(clientOf("::ffff:203.0.113.7")).toBe("203.0.113.7");
  });

  it("is an IPv6 address's /64, so a subscriber's fresh address per guess is still one client", () => {
    expect(clientOf("2001:db8:1:2::1")).toBe("2001:db8:1:2::/64");
    expect(clientOf("2001:0DB8:1:2:ffff:ffff:ffff:ffff")).toBe("2001:db8:1:2::/64");
    expect(clientOf("2001:db8:1:3::1")).not.toBe(clientOf("2001:db8:1:2::1"));
  });

  it("is one client for requests whose address is unknown (a socket already gone)", () => {
    expect(clientOf(undefined)).toBe(clientOf(undefined));
  });
});

describe("the failure limit", () => {
  it("refuses the eleventh within the window until the oldest failure falls out of it", () => {
    const clock = manualClock();
    const limit = failureLimit({ clock });
    for (let i = 0; i < 10; i++) {
      expect(limit.refused("203.0.113.7")).toBeUndefined();
      limit.failed("203.0.113.7");
      clock.advance(1000);
    }
    expect(limit.refused("203.0.113.7")).toBe(FAILURE_WINDOW_MS / 1000 - 10);
    expect(limit.refused("203.0.113.8")).toBeUndefined();
    clock.advance(FAILURE_WINDOW_MS - 10_000);
    expect(limit.refused("203.0.113.7")).toBeUndefined();
  });

  it("tracks at most maxClients clients, forgetting the one whose last failure is oldest", () => {
    const limit = failureLimit({ clock: manualClock(), maxClients: 2 });
    for (let i = 0; i < 10; i++) limit.failed("192.0.2.1");
    limit.failed("192.0.2.2");
    expect(limit.refused("192.0.2.1")).toBeGreaterThan(0);
    limit.failed("192.0.2.3");
    expect(limit.refused("192.0.2.1")).toBeUndefined();
  });
});
