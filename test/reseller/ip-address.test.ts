import { describe, expect, it } from "vitest";
import { canonicalIp, classifyIp, SPECIAL_PURPOSE_RANGES, unusableIpReason, type IpClass } from "../../src/vocabulary/ip-address.js";

type Verdict = "accepted" | "refused" | "private";

/**
 * Every entry of the IANA special-purpose registries (IPv4: RFC 6890's; IPv6: its own), the
 * multicast blocks and the unicast spaces around them, with addresses at their edges and what
 * the bridge must make of them. Written out here rather than derived from the code's table,
 * so a wrong row there fails here.
 */
const ENTRIES: { block: string; cls: IpClass; verdict: Verdict; samples: string[] }[] = [
  // IPv4
  { block: "0.0.0.0/0", cls: "global", verdict: "accepted", samples: ["1.1.1.1", "8.8.8.8", "223.255.255.255", "100.63.255.255", "100.128.0.0", "172.15.255.255", "172.32.0.0", "198.17.255.255", "198.20.0.0", "192.0.1.0", "192.88.98.255"] },
  { block: "0.0.0.0/8", cls: "unspecified", verdict: "refused", samples: ["0.0.0.1", "0.255.255.255"] },
  { block: "0.0.0.0/32", cls: "unspecified", verdict: "refused", samples: ["0.0.0.0"] },
  { block: "10.0.0.0/8", cls: "private", verdict: "private", samples: ["10.0.0.0", "10.255.255.255"] },
  { block: "100.64.0.0/10", cls: "private", verdict: "private", samples: ["100.64.0.0", "100.127.255.255"] },
  { block: "127.0.0.0/8", cls: "loopback", verdict: "refused", samples: ["127.0.0.1", "127.255.255.255"] },
  { block: "169.254.0.0/16", cls: "link-local", verdict: "refused", samples: ["169.254.0.0", "169.254.255.255"] },
  { block: "172.16.0.0/12", cls: "private", verdict: "private", samples: ["172.16.0.0", "172.31.255.255"] },
  { block: "192.0.0.0/24", cls: "reserved", verdict: "refused", samples: ["192.0.0.11", "192.0.0.169", "192.0.0.172", "192.0.0.255"] },
  { block: "192.0.0.0/29", cls: "reserved", verdict: "refused", samples: ["192.0.0.0", "192.0.0.7"] },
  { block: "192.0.0.8/32", cls: "reserved", verdict: "refused", samples: ["192.0.0.8"] },
  { block: "192.0.0.9/32", cls: "global", verdict: "accepted", samples: ["192.0.0.9"] },
  { block: "192.0.0.10/32", cls: "global", verdict: "accepted", samples: ["192.0.0.10"] },
  { block: "192.0.0.170/32", cls: "reserved", verdict: "refused", samples: ["192.0.0.170"] },
  { block: "192.0.0.171/32", cls: "reserved", verdict: "refused", samples: ["192.0.0.171"] },
  { block: "192.0.2.0/24", cls: "documentation", verdict: "accepted", samples: ["192.0.2.0", "192.0.2.255"] },
  { block: "192.31.196.0/24", cls: "global", verdict: "accepted", samples: ["192.31.196.0", "192.31.196.255"] },
  { block: "192.52.193.0/24", cls: "global", verdict: "accepted", samples: ["192.52.193.0", "192.52.193.255"] },
  { block: "192.88.99.0/24", cls: "transition", verdict: "refused", samples: ["192.88.99.0", "192.88.99.1", "192.88.99.255"] },
  { block: "192.88.99.2/32", cls: "transition", verdict: "refused", samples: ["192.88.99.2"] },
  { block: "192.168.0.0/16", cls: "private", verdict: "private", samples: ["192.168.0.0", "192.168.255.255"] },
  { block: "192.175.48.0/24", cls: "global", verdict: "accepted", samples: ["192.175.48.0", "192.175.48.255"] },
  { block: "198.18.0.0/15", cls: "benchmarking", verdict: "accepted", samples: ["198.18.0.0", "198.19.255.255"] },
  { block: "198.51.100.0/24", cls: "documentation", verdict: "accepted", samples: ["198.51.100.0", "198.51.100.255"] },
  { block: "203.0.113.0/24", cls: "documentation", verdict: "accepted", samples: ["203.0.113.0", "203.0.113.255"] },
  { block: "224.0.0.0/4", cls: "multicast", verdict: "refused", samples: ["224.0.0.0", "239.255.255.255"] },
  { block: "240.0.0.0/4", cls: "reserved", verdict: "refused", samples: ["240.0.0.0", "255.255.255.254"] },
  { block: "255.255.255.255/32", cls: "broadcast", verdict: "refused", samples: ["255.255.255.255"] },
  // IPv6
  { block: "::/0", cls: "reserved", verdict: "refused", samples: ["::2", "::1.2.3.4", "1::1", "1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "4000::1", "fec0::1", "feff::1"] },
  { block: "2000::/3", cls: "global", verdict: "accepted", samples: ["2000::", "2a00:1450::7", "2606:4700::1111", "2001:200::1", "3fff:1000::1", "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"] },
  { block: "::/128", cls: "unspecified", verdict: "refused", samples: ["::"] },
  { block: "::1/128", cls: "loopback", verdict: "refused", samples: ["::1"] },
  { block: "::ffff:0:0/96", cls: "transition", verdict: "refused", samples: [] },
  { block: "64:ff9b::/96", cls: "transition", verdict: "refused", samples: ["64:ff9b::", "64:ff9b::808:808", "64:ff9b::ffff:ffff"] },
  { block: "64:ff9b:1::/48", cls: "transition", verdict: "refused", samples: ["64:ff9b:1::", "64:ff9b:1:ffff:ffff:ffff:ffff:ffff"] },
  { block: "100::/64", cls: "reserved", verdict: "refused", samples: ["100::", "100::ffff:ffff:ffff:ffff"] },
  { block: "100:0:0:1::/64", cls: "reserved", verdict: "refused", samples: ["100:0:0:1::", "100:0:0:1:ffff:ffff:ffff:ffff"] },
  { block: "2001::/23", cls: "reserved", verdict: "refused", samples: ["2001:1::", "2001:1::4", "2001:2:1::", "2001:4::1", "2001:4:113::", "2001:40::1", "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff"] },
  { block: "2001::/32", cls: "transition", verdict: "refused", samples: ["2001::", "2001::1", "2001:0:ffff:ffff:ffff:ffff:ffff:ffff"] },
  { block: "2001:1::1/128", cls: "global", verdict: "accepted", samples: ["2001:1::1"] },
  { block: "2001:1::2/128", cls: "global", verdict: "accepted", samples: ["2001:1::2"] },
  { block: "2001:1::3/128", cls: "global", verdict: "accepted", samples: ["2001:1::3"] },
  { block: "2001:2::/48", cls: "benchmarking", verdict: "accepted", samples: ["2001:2::", "2001:2:0:ffff:ffff:ffff:ffff:ffff"] },
  { block: "2001:3::/32", cls: "global", verdict: "accepted", samples: ["2001:3::", "2001:3:ffff:ffff:ffff:ffff:ffff:ffff"] },
  { block: "2001:4:112::/48", cls: "global", verdict: "accepted", samples: ["2001:4:112::", "2001:4:112:ffff:ffff:ffff:ffff:ffff"] },
  { block: "2001:10::/28", cls: "reserved", verdict: "refused", samples: ["2001:10::", "2001:1f:ffff:ffff:ffff:ffff:ffff:ffff"] },
  { block: "2001:20::/28", cls: "global", verdict: "accepted", samples: ["2001:20::", "2001:2f:ffff:ffff:ffff:ffff:ffff:ffff"] },
  { block: "2001:30::/28", cls: "global", verdict: "accepted", samples: ["2001:30::", "2001:3f:ffff:ffff:ffff:ffff:ffff:ffff"] },
  { block: "2001:db8::/32", cls: "documentation", verdict: "accepted", samples: ["2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"] },
  { block: "2002::/16", cls: "transition", verdict: "refused", samples: ["2002::", "2002:c000:204::1", "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff"] },
  { block: "2620:4f:8000::/48", cls: "global", verdict: "accepted", samples: ["2620:4f:8000::", "2620:4f:8000:ffff:ffff:ffff:ffff:ffff"] },
  { block: "3fff::/20", cls: "documentation", verdict: "accepted", samples: ["3fff::", "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff"] },
  { block: "5f00::/16", cls: "reserved", verdict: "refused", samples: ["5f00::", "5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff"] },
  { block: "fc00::/7", cls: "private", verdict: "private", samples: ["fc00::", "fd12:3456::1", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"] },
  { block: "fe80::/10", cls: "link-local", verdict: "refused", samples: ["fe80::", "fe80::1", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff"] },
  { block: "ff00::/8", cls: "multicast", verdict: "refused", samples: ["ff00::", "ff02::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"] },
];

/** What the bridge makes of `ip` as an order would carry it: canonicalised first, as every intake does. */
function verdictOf(ip: string): Verdict {
  const canonical = canonicalIp(ip);
  if (!canonical) throw new Error(`${ip} is not an address`);
  if (unusableIpReason(canonical, true) !== undefined) return "refused";
  return unusableIpReason(canonical, false) === undefined ? "accepted" : "private";
}

describe("special-purpose addresses", () => {
  it("the table holds every registry entry listed here, and nothing else", () => {
    expect(SPECIAL_PURPOSE_RANGES.map((r) => r.block).sort()).toEqual(ENTRIES.map((e) => e.block).sort());
  });

  describe.each(ENTRIES)("$block", ({ block, cls, verdict, samples }) => {
    it(`is ${cls}, ${verdict}`, () => {
      expect(SPECIAL_PURPOSE_RANGES.find((r) => r.block === block)?.cls).toBe(cls);
      for (const ip of samples) {
        const canonical = canonicalIp(ip)!;
        expect(classifyIp(canonical).cls, ip).toBe(cls);
        expect(verdictOf(ip), ip).toBe(verdict);
      }
    });

  });

  // Only the refused blocks have a reason to name (a skipped test would fail CI: none is declared for the others).
  describe.each(ENTRIES.filter((e) => e.verdict !== "accepted"))("$block", ({ block, samples }) => {
    it("names the block in the reason", () => {
      // ::/0 says where an address is not: outside 2000::/3, the global unicast space.
      const named = block === "::/0" ? "outside 2000::/3" : block;
      for (const ip of samples) expect(unusableIpReason(canonicalIp(ip)!, false), ip).toContain(named);
    });
  });

  it("an IPv4-mapped IPv6 address is its IPv4 address, and judged as such", () => {
    expect(verdictOf("::ffff:8.8.8.8")).toBe("accepted");
    expect(verdictOf("::ffff:192.0.0.1")).toBe("refused");
    expect(verdictOf("::ffff:192.88.99.1")).toBe("refused");
    expect(verdictOf("::ffff:10.0.0.1")).toBe("private");
    expect(verdictOf("::ffff:198.18.0.1")).toBe("accepted");
  });

  // The same purpose in both families gets the same answer (issue 21 item 5: 2001::/23 and
  // 2002::/16 were accepted while 192.0.0.0/24 and 192.88.99.0/24 were refused).
  it.each([
    ["IETF protocol assignments", "192.0.0.1", "2001:5::1"],
    ["IETF protocol assignments, last address", "192.0.0.255", "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff"],
    ["6to4", "192.88.99.1", "2002:c058:6301::1"],
    ["PCP anycast", "192.0.0.9", "2001:1::1"],
    ["TURN anycast", "192.0.0.10", "2001:1::2"],
    ["AMT", "192.52.193.1", "2001:3::1"],
    ["AS112", "192.31.196.1", "2001:4:112::1"],
    ["AS112 direct delegation", "192.175.48.1", "2620:4f:8000::1"],
    ["documentation", "192.0.2.1", "2001:db8::1"],
    ["benchmarking", "198.18.0.1", "2001:2::1"],
    ["private", "10.0.0.1", "fd00::1"],
    ["loopback", "127.0.0.1", "::1"],
    ["link-local", "169.254.1.1", "fe80::1"],
    ["multicast", "224.0.0.1", "ff02::1"],
    ["unspecified", "0.0.0.0", "::"],
  ])("%s: %s and %s are judged alike", (_purpose, v4, v6) => {
    expect(classifyIp(canonicalIp(v6)!).cls).toBe(classifyIp(canonicalIp(v4)!).cls);
    expect(verdictOf(v6)).toBe(verdictOf(v4));
  });

  it("follows the registry's Globally Reachable column, save where the contract or one-spelling decides", () => {
    // Accepted although not globally reachable: examples and tests must work (contract section 2).
    const acceptedAnyway = ["192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "198.18.0.0/15", "2001:db8::/32", "3fff::/20", "2001:2::/48"];
    // Not globally reachable, but the operator may allow them (ALLOW_PRIVATE_IPS).
    const privateRanges = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7"];
    // Globally reachable, but it stands for an IPv4 address: license that address itself.
    const refusedAnyway = ["64:ff9b::/96"];
    for (const row of SPECIAL_PURPOSE_RANGES) {
      if (row.reachable === undefined) continue;
      const canonical = canonicalIp(row.block.split("/")[0]!)!;
      const verdict = verdictOf(canonical);
      const expected = acceptedAnyway.includes(row.block)
        ? "accepted"
        : privateRanges.includes(row.block)
          ? "private"
          : refusedAnyway.includes(row.block)
            ? "refused"
            : row.reachable
              ? "accepted"
              : "refused";
      expect(verdict, row.block).toBe(expected);
    }
  });
});
