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
function ipv6Groups(s: string): number[] {
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

export type IpClass =
  | "global"
  | "documentation"
  | "private"
  | "unspecified"
  | "loopback"
  | "link-local"
  | "multicast"
  | "broadcast"
  | "reserved";

interface Range {
  /** Network address, canonical. */
  net: string;
  bits: number;
  cls: IpClass;
  label: string;
}

/** First match wins: more specific ranges come first. */
const V4_RANGES: Range[] = [
  { net: "255.255.255.255", bits: 32, cls: "broadcast", label: "the broadcast address" },
  { net: "0.0.0.0", bits: 8, cls: "unspecified", label: "an unspecified address (0.0.0.0/8)" },
  { net: "127.0.0.0", bits: 8, cls: "loopback", label: "a loopback address (127.0.0.0/8)" },
  { net: "169.254.0.0", bits: 16, cls: "link-local", label: "a link-local address (169.254.0.0/16)" },
  { net: "224.0.0.0", bits: 4, cls: "multicast", label: "a multicast address (224.0.0.0/4)" },
  { net: "240.0.0.0", bits: 4, cls: "reserved", label: "a reserved address (240.0.0.0/4)" },
  { net: "192.0.0.0", bits: 24, cls: "reserved", label: "a reserved address (192.0.0.0/24, IETF protocol assignments)" },
  { net: "192.88.99.0", bits: 24, cls: "reserved", label: "a reserved address (192.88.99.0/24, deprecated 6to4 relay)" },
  { net: "192.0.2.0", bits: 24, cls: "documentation", label: "a documentation address (192.0.2.0/24)" },
  { net: "198.51.100.0", bits: 24, cls: "documentation", label: "a documentation address (198.51.100.0/24)" },
  { net: "203.0.113.0", bits: 24, cls: "documentation", label: "a documentation address (203.0.113.0/24)" },
  { net: "198.18.0.0", bits: 15, cls: "documentation", label: "a benchmarking address (198.18.0.0/15)" },
  { net: "10.0.0.0", bits: 8, cls: "private", label: "a private address (10.0.0.0/8)" },
  { net: "172.16.0.0", bits: 12, cls: "private", label: "a private address (172.16.0.0/12)" },
  { net: "192.168.0.0", bits: 16, cls: "private", label: "a private address (192.168.0.0/16)" },
  { net: "100.64.0.0", bits: 10, cls: "private", label: "a shared (CGNAT) address (100.64.0.0/10)" },
];

const V6_RANGES: Range[] = [
  { net: "::", bits: 128, cls: "unspecified", label: "the unspecified address (::)" },
  { net: "::1", bits: 128, cls: "loopback", label: "the loopback address (::1)" },
  { net: "fe80::", bits: 10, cls: "link-local", label: "a link-local address (fe80::/10)" },
  { net: "ff00::", bits: 8, cls: "multicast", label: "a multicast address (ff00::/8)" },
  { net: "fc00::", bits: 7, cls: "private", label: "a unique local address (fc00::/7)" },
  { net: "2001:db8::", bits: 32, cls: "documentation", label: "a documentation address (2001:db8::/32)" },
  { net: "2000::", bits: 3, cls: "global", label: "a global unicast address" },
];

function v4Number(ip: string): number {
  return ip.split(".").reduce((n, o) => n * 256 + Number(o), 0);
}

/** Each IPv4 range as the number its prefix divides every address of it down to (every intake classifies). */
const V4_PREFIXES = V4_RANGES.map((r) => {
  const size = 2 ** (32 - r.bits);
  return { range: r, size, prefix: Math.floor(v4Number(r.net) / size) };
});

/** Each IPv6 range with its network's groups, parsed once. */
const V6_NETS = V6_RANGES.map((range) => ({ range, net: ipv6Groups(range.net) }));

function inV6(groups: number[], { range, net }: (typeof V6_NETS)[number]): boolean {
  let bits = range.bits;
  for (let i = 0; i < 8 && bits > 0; i++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    if ((groups[i]! & mask) !== (net[i]! & mask)) return false;
  }
  return true;
}

/** What kind of address a canonical IP is, and how to name it in an error. */
export function classifyIp(canonical: string): { cls: IpClass; label: string } {
  if (isIPv4(canonical)) {
    const n = v4Number(canonical);
    const r = V4_PREFIXES.find((x) => Math.floor(n / x.size) === x.prefix)?.range;
    return r ? { cls: r.cls, label: r.label } : { cls: "global", label: "a public address" };
  }
  const groups = ipv6Groups(canonical);
  const r = V6_NETS.find((x) => inV6(groups, x))?.range;
  // Outside 2000::/3 and the ranges above, IPv6 is not assigned for unicast use.
  return r ? { cls: r.cls, label: r.label } : { cls: "reserved", label: "a reserved IPv6 address (outside 2000::/3)" };
}

/**
 * Why a licence cannot be bound to this address, or undefined when it can. Private ranges
 * (RFC 1918, CGNAT, IPv6 ULA) pass only when `allowPrivate` (ALLOW_PRIVATE_IPS).
 */
export function unusableIpReason(canonical: string, allowPrivate: boolean): string | undefined {
  const { cls, label } = classifyIp(canonical);
  if (cls === "global" || cls === "documentation") return undefined;
  if (cls === "private") return allowPrivate ? undefined : `is ${label}; set ALLOW_PRIVATE_IPS=true to license private addresses`;
  return `is ${label}, which cannot hold a licence`;
}
