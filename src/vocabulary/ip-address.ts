import { isIPv4, isIPv6 } from "node:net";

/**
 * One address, one spelling. A licence is the pair (IP, type) upstream, so two spellings of
 * one address must never become two licences: every IP is canonicalised before anything else
 * sees it (service-contract.md section 2).
 *
 * - IPv4: the dotted quad as `net.isIPv4` accepts it (no leading zeros, no octal).
 * - IPv6: lower case, leading zeros dropped, the longest run of two or more zero groups
 *   compressed to `::` (the first on a tie), per RFC 5952 section 4.
 * - An IPv4-mapped IPv6 address (`::ffff:203.0.113.9`) is its IPv4 address.
 */
export function canonicalIp(ip: string): string | undefined {
  const s = ip.trim();
  if (isIPv4(s)) return s;
  // Zone ids (fe80::1%eth0) name an interface of this host, never a licensable address.
  if (!isIPv6(s) || s.includes("%")) return undefined;
  const groups = ipv6Groups(s);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`;
  }
  return formatIpv6(groups);
}

/** True when both are the same address in any spelling. */
export function sameIp(a: string, b: string): boolean {
  return a === b || (canonicalIp(a) ?? a) === (canonicalIp(b) ?? b);
}

/** Eight 16-bit groups of a valid IPv6 address (an embedded IPv4 tail becomes the last two). */
export function ipv6Groups(s: string): number[] {
  let text = s.toLowerCase();
  const tail: number[] = [];
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const o = v4[1]!.split(".").map(Number);
    tail.push((o[0]! << 8) | o[1]!, (o[2]! << 8) | o[3]!);
    text = text.slice(0, -v4[1]!.length);
    if (text.endsWith(":") && !text.endsWith("::")) text = text.slice(0, -1);
  }
  const [head, rest] = text.split("::") as [string, string | undefined];
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => parseInt(g, 16)));
  const left = parse(head);
  const right = [...(rest === undefined ? [] : parse(rest)), ...tail];
  if (rest === undefined) return [...left, ...right];
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

function formatIpv6(groups: number[]): string {
  // The longest run of zero groups (length 2 or more), the first one on a tie.
  let best = { start: -1, len: 0 };
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.len) best = { start: i, len: j - i };
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.len < 2) return hex.join(":");
  return `${hex.slice(0, best.start).join(":")}::${hex.slice(best.start + best.len).join(":")}`;
}

/**
 * What an address is for, as far as a licence cares:
 * - global: a unicast address any host on the Internet may have (or a special-purpose block
 *   the registry marks globally reachable);
 * - documentation, benchmarking: not reachable, but accepted so that examples and tests work
 *   (contract section 2);
 * - private: RFC 1918, shared 100.64.0.0/10, unique local fc00::/7; accepted only with
 *   ALLOW_PRIVATE_IPS;
 * - transition: an address that stands for another (6to4, Teredo, NAT64, IPv4-mapped): the
 *   licence belongs on the address it stands for, or one server could hold two under two
 *   spellings;
 * - the rest (unspecified, loopback, link-local, multicast, broadcast, reserved) no server can
 *   be reached at from the reseller.
 */
export type IpClass =
  | "global"
  | "documentation"
  | "benchmarking"
  | "private"
  | "transition"
  | "unspecified"
  | "loopback"
  | "link-local"
  | "multicast"
  | "broadcast"
  | "reserved";

/** Whether a licence may bind to an address of each class. */
const LICENSABLE: Record<IpClass, "yes" | "no" | "if private allowed"> = {
  global: "yes",
  documentation: "yes",
  benchmarking: "yes",
  private: "if private allowed",
  transition: "no",
  unspecified: "no",
  loopback: "no",
  "link-local": "no",
  multicast: "no",
  broadcast: "no",
  reserved: "no",
};

export interface SpecialRange {
  /** CIDR, network address canonical. */
  block: string;
  /** The registry's name for it. */
  name: string;
  cls: IpClass;
  /**
   * The registry's "Globally Reachable": undefined where it says N/A (6to4, Teredo, deprecated
   * blocks) or the block is not in a special-purpose registry (multicast, the unicast spaces).
   */
  reachable?: boolean;
}

/**
 * The IANA IPv4 Special-Purpose Address Registry (RFC 6890) and IPv6 Special-Purpose Address
 * Registry, entry for entry, plus the multicast blocks and the unicast spaces of the address
 * space registries, so both families are judged by one rule.
 *
 * The most specific block that holds an address decides. That is how the registry reads: a
 * block marked not globally reachable (192.0.0.0/24, 2001::/23) holds more specific entries
 * that are (192.0.0.9/32, 2001:1::1/128, 2001:3::/32, 2001:4:112::/48, 2001:20::/28, ...), and
 * those are ordinary reachable addresses that a server can have, so they class as global.
 * Otherwise a class follows the "Globally Reachable" column: false (or N/A) is never global.
 * The exceptions, each for a reason above: documentation and benchmarking (accepted by the
 * contract; 2001:2::/48 and 3fff::/20 like their IPv4 counterparts), private (the operator's
 * choice) and 64:ff9b::/96, globally reachable but standing for an IPv4 address (transition).
 */
export const SPECIAL_PURPOSE_RANGES: readonly SpecialRange[] = [
  // IPv4 (unicast outside every entry below: global)
  { block: "0.0.0.0/0", name: "unicast", cls: "global" },
  { block: "0.0.0.0/8", name: '"this network"', cls: "unspecified", reachable: false },
  { block: "0.0.0.0/32", name: '"this host on this network"', cls: "unspecified", reachable: false },
  { block: "10.0.0.0/8", name: "private-use", cls: "private", reachable: false },
  { block: "100.64.0.0/10", name: "shared address space (CGNAT)", cls: "private", reachable: false },
  { block: "127.0.0.0/8", name: "loopback", cls: "loopback", reachable: false },
  { block: "169.254.0.0/16", name: "link local", cls: "link-local", reachable: false },
  { block: "172.16.0.0/12", name: "private-use", cls: "private", reachable: false },
  { block: "192.0.0.0/24", name: "IETF protocol assignments", cls: "reserved", reachable: false },
  { block: "192.0.0.0/29", name: "IPv4 service continuity prefix", cls: "reserved", reachable: false },
  { block: "192.0.0.8/32", name: "IPv4 dummy address", cls: "reserved", reachable: false },
  { block: "192.0.0.9/32", name: "Port Control Protocol anycast", cls: "global", reachable: true },
  { block: "192.0.0.10/32", name: "Traversal Using Relays around NAT anycast", cls: "global", reachable: true },
  { block: "192.0.0.170/32", name: "NAT64/DNS64 discovery", cls: "reserved", reachable: false },
  { block: "192.0.0.171/32", name: "NAT64/DNS64 discovery", cls: "reserved", reachable: false },
  { block: "192.0.2.0/24", name: "documentation (TEST-NET-1)", cls: "documentation", reachable: false },
  { block: "192.31.196.0/24", name: "AS112-v4", cls: "global", reachable: true },
  { block: "192.52.193.0/24", name: "AMT", cls: "global", reachable: true },
  { block: "192.88.99.0/24", name: "deprecated 6to4 relay anycast", cls: "transition" },
  { block: "192.88.99.2/32", name: "6a44-relay anycast", cls: "transition", reachable: false },
  { block: "192.168.0.0/16", name: "private-use", cls: "private", reachable: false },
  { block: "192.175.48.0/24", name: "direct delegation AS112 service", cls: "global", reachable: true },
  { block: "198.18.0.0/15", name: "benchmarking", cls: "benchmarking", reachable: false },
  { block: "198.51.100.0/24", name: "documentation (TEST-NET-2)", cls: "documentation", reachable: false },
  { block: "203.0.113.0/24", name: "documentation (TEST-NET-3)", cls: "documentation", reachable: false },
  { block: "224.0.0.0/4", name: "multicast", cls: "multicast" },
  { block: "240.0.0.0/4", name: "reserved", cls: "reserved", reachable: false },
  { block: "255.255.255.255/32", name: "limited broadcast", cls: "broadcast", reachable: false },
  // IPv6 (outside 2000::/3 nothing is allocated for global unicast)
  { block: "::/0", name: "outside 2000::/3, not allocated for global unicast", cls: "reserved" },
  { block: "2000::/3", name: "global unicast", cls: "global" },
  { block: "::/128", name: "unspecified", cls: "unspecified", reachable: false },
  { block: "::1/128", name: "loopback", cls: "loopback", reachable: false },
  // Never met here: canonicalIp turns these into the IPv4 address they stand for.
  { block: "::ffff:0:0/96", name: "IPv4-mapped", cls: "transition", reachable: false },
  { block: "64:ff9b::/96", name: "IPv4-IPv6 translation (NAT64)", cls: "transition", reachable: true },
  { block: "64:ff9b:1::/48", name: "local-use IPv4-IPv6 translation", cls: "transition", reachable: false },
  { block: "100::/64", name: "discard-only", cls: "reserved", reachable: false },
  { block: "100:0:0:1::/64", name: "dummy IPv6 prefix", cls: "reserved", reachable: false },
  { block: "2001::/23", name: "IETF protocol assignments", cls: "reserved", reachable: false },
  { block: "2001::/32", name: "Teredo", cls: "transition" },
  { block: "2001:1::1/128", name: "Port Control Protocol anycast", cls: "global", reachable: true },
  { block: "2001:1::2/128", name: "Traversal Using Relays around NAT anycast", cls: "global", reachable: true },
  { block: "2001:1::3/128", name: "DNS-SD service registration protocol anycast", cls: "global", reachable: true },
  { block: "2001:2::/48", name: "benchmarking", cls: "benchmarking", reachable: false },
  { block: "2001:3::/32", name: "AMT", cls: "global", reachable: true },
  { block: "2001:4:112::/48", name: "AS112-v6", cls: "global", reachable: true },
  { block: "2001:10::/28", name: "deprecated ORCHID", cls: "reserved" },
  { block: "2001:20::/28", name: "ORCHIDv2", cls: "global", reachable: true },
  { block: "2001:30::/28", name: "drone remote ID entity tags", cls: "global", reachable: true },
  { block: "2001:db8::/32", name: "documentation", cls: "documentation", reachable: false },
  { block: "2002::/16", name: "6to4", cls: "transition" },
  { block: "2620:4f:8000::/48", name: "direct delegation AS112 service", cls: "global", reachable: true },
  { block: "3fff::/20", name: "documentation", cls: "documentation", reachable: false },
  { block: "5f00::/16", name: "segment routing (SRv6) SIDs", cls: "reserved", reachable: false },
  { block: "fc00::/7", name: "unique local", cls: "private", reachable: false },
  { block: "fe80::/10", name: "link-local unicast", cls: "link-local", reachable: false },
  { block: "ff00::/8", name: "multicast", cls: "multicast" },
];

/** How an error names an address of each class (the block and its registry name follow). */
const CLASS_LABEL: Record<IpClass, string> = {
  global: "a public address",
  documentation: "a documentation address",
  benchmarking: "a benchmarking address",
  private: "a private address",
  transition: "a transition address that stands for another address",
  unspecified: "an unspecified address",
  loopback: "a loopback address",
  "link-local": "a link-local address",
  multicast: "a multicast address",
  broadcast: "the broadcast address",
  reserved: "a reserved address",
};

/** An address as one number: 32 bits for IPv4, 128 for IPv6. */
function addressBits(canonical: string): { v4: boolean; n: bigint } {
  if (isIPv4(canonical)) return { v4: true, n: canonical.split(".").reduce((n, o) => (n << 8n) | BigInt(o), 0n) };
  return { v4: false, n: ipv6Groups(canonical).reduce((n, g) => (n << 16n) | BigInt(g), 0n) };
}

/** Each family's blocks parsed once, most specific first, so the first that holds an address decides. */
const BLOCKS = SPECIAL_PURPOSE_RANGES.map((range) => {
  const [net, bits] = range.block.split("/") as [string, string];
  const { v4, n } = addressBits(net);
  const shift = BigInt((v4 ? 32 : 128) - Number(bits));
  return { range, v4, bits: Number(bits), shift, prefix: n >> shift };
}).sort((a, b) => b.bits - a.bits);
const V4_BLOCKS = BLOCKS.filter((b) => b.v4);
const V6_BLOCKS = BLOCKS.filter((b) => !b.v4);

/** The registry entry of a canonical IP: the most specific block that holds it (0.0.0.0/0 and ::/0 hold all). */
function rangeOf(canonical: string): SpecialRange {
  const { v4, n } = addressBits(canonical);
  return (v4 ? V4_BLOCKS : V6_BLOCKS).find((b) => n >> b.shift === b.prefix)!.range;
}

/** What kind of address a canonical IP is, and how to name it in an error. */
export function classifyIp(canonical: string): { cls: IpClass; label: string } {
  const range = rangeOf(canonical);
  const where = range.block.endsWith("/0") ? range.name : `${range.block}, ${range.name}`;
  return { cls: range.cls, label: `${CLASS_LABEL[range.cls]} (${where})` };
}

/**
 * Why a licence cannot be bound to this address, or undefined when it can. Private ranges
 * (RFC 1918, CGNAT, IPv6 ULA) pass only when `allowPrivate` (ALLOW_PRIVATE_IPS).
 */
export function unusableIpReason(canonical: string, allowPrivate: boolean): string | undefined {
  const { cls, label } = classifyIp(canonical);
  const licensable = LICENSABLE[cls];
  if (licensable === "yes") return undefined;
  if (licensable === "if private allowed") return allowPrivate ? undefined : `is ${label}; set ALLOW_PRIVATE_IPS=true to license private addresses`;
  return `is ${label}, which cannot hold a licence`;
}
