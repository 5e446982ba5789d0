import type { Manage2SandboxLicense, Manage2SandboxPackage, StateRules } from "./state.js";

/**
 * How the Manage2 sandbox writes its answers, where the sources disagree or say nothing
 * (notes/providers-research.md, A0 and A6–A10), each selectable so a client can be tested
 * against every form:
 * - numbers: "numbers" (every number a JSON number, the default), "documented" (each field as
 *   the current JSON examples type it: add's `licenseid` and prices strings, XMLlicenseInfo's
 *   numbers, XMLRawlookup's items all strings, XMLgroupInfo's `version` "0.5"), or "strings"
 *   (every value a string, as XML, YAML and the older JSON examples have them);
 * - packages: XMLpackageInfo's map as the API page has it (in an array) or as "Manage2 Return
 *   Data" has it (an object);
 * - emptyLicenses: what XMLlicenseInfo answers for no match (undocumented);
 * - lookupNone: XMLlookup for no licence, `licenseid` left out or `status` 0 (undocumented);
 * - transferStatus: 1, or 0 with the success text as the transfer page's JSON example shows.
 * Rules of the account (duplicate adds, package updates, the reactivation fee) ride along.
 */
export interface Manage2Dialect extends StateRules {
  numbers: "numbers" | "documented" | "strings";
  packages: "array" | "object";
  emptyLicenses: "object" | "array" | "missing";
  lookupNone: "missing" | "status0";
  transferStatus: 0 | 1;
}

export const DEFAULT_DIALECT: Manage2Dialect = {
  numbers: "numbers",
  packages: "array",
  emptyLicenses: "object",
  lookupNone: "missing",
  transferStatus: 1,
  duplicateAdd: "refuse",
  packageUpdate: "allow",
  reactivationFee: "after-invoice",
};

type Scalar = string | number | null;

/** Writes numbers the dialect's way: `asString` says the documented JSON example writes this field as a string. */
export class NumberWriter {
  constructor(private readonly mode: Manage2Dialect["numbers"]) {}

  n(value: number, asString = false): number | string {
    return this.mode === "strings" || (this.mode === "documented" && asString) ? String(value) : value;
  }

  /** A nullable number (a time, an id). */
  nn(value: number | null, asString = false): number | string | null {
    return value === null ? null : this.n(value, asString);
  }

  /** Money: "100.00" in the documented and string forms, 100 as a number. */
  money(value: number, asString = true): number | string {
    return this.mode === "strings" || (this.mode === "documented" && asString) ? value.toFixed(2) : value;
  }
}

/** One licence as XMLlicenseInfo writes it (the 2024-12-19 example's fields; what the sandbox does not know is null). */
export function licenseInfoRecord(w: NumberWriter, l: Manage2SandboxLicense, pkg: Manage2SandboxPackage | undefined): Record<string, unknown> {
  return {
    accounts: null,
    activation_code: null,
    activation_link: null,
    adddate: w.n(l.adddate),
    addedby: w.n(101),
    distro: null,
    envtype: null,
    expiredon: w.nn(l.expiredon),
    expirereason: l.expirereason,
    external_notes: l.external_notes,
    groupid: w.n(l.groupid),
    host_type: null,
    hostname: null,
    ip: l.ip,
    licenseid: w.n(l.licenseid),
    maxusers: null,
    os: null,
    osver: null,
    package_name: pkg?.name ?? null,
    packageid: w.n(l.packageid),
    packageqty: w.n(1),
    producttype: w.n(pkg?.producttype ?? 1),
    status: w.n(l.status),
    termexpires_months: null,
    termexpires_unixtime: null,
    updateexpiretime: null,
    version: null,
  };
}

/** One licence as XMLRawlookup writes it: the package under `package`, every value a string in the documented example. */
export function rawLookupRecord(w: NumberWriter, l: Manage2SandboxLicense): Record<string, unknown> {
  return {
    status: w.n(l.status, true),
    ip: l.ip,
    hostname: null,
    os: null,
    valid: w.n(1, true),
    expiredon: w.nn(l.expiredon, true),
    isenkompass: w.n(0, true),
    groupid: w.n(l.groupid, true),
    company: "Sandbox Partner",
    packageqty: w.n(1, true),
    adddate: w.n(l.adddate, true),
    licenseid: w.n(l.licenseid, true),
    expirereason: l.expirereason,
    distro: null,
    version: null,
    maxusers: null,
    package: w.n(l.packageid, true),
    envtype: null,
    osver: null,
    updateexpiretime: null,
    external_notes: l.external_notes,
  };
}

/**
 * A minimal XML form of an answer, for a caller that did not ask for JSON (XML is Manage2's
 * default): the root element named after the function with the answer's plain values as
 * attributes; a map of records as one element per record (`<licenses name="L1" …/>`), a list as
 * repeated elements, a map of names as one element's attributes (`<packages P2="…"/>`).
 */
export function toXml(fn: string, answer: Record<string, unknown>): string {
  const attrs = (record: Record<string, unknown>): string =>
    Object.entries(record)
      .filter(([, v]) => v === null || typeof v !== "object")
      .map(([k, v]) => ` ${k}="${escapeXml(v === null ? "" : String(v as Scalar))}"`)
      .join("");
  const children: string[] = [];
  for (const [key, value] of Object.entries(answer)) {
    if (value === null || typeof value !== "object") continue;
    const items = Array.isArray(value) ? value : [value];
    for (const item of items) {
      if (item === null || typeof item !== "object") {
        children.push(`<${key}>${escapeXml(String(item as Scalar))}</${key}>`);
        continue;
      }
      const record = item as Record<string, unknown>;
      const nested = Object.entries(record).filter(([, v]) => v !== null && typeof v === "object");
      if (nested.length > 0 && nested.length === Object.keys(record).length) {
        for (const [name, inner] of nested) children.push(`<${key} name="${escapeXml(name)}"${attrs(inner as Record<string, unknown>)}/>`);
      } else {
        children.push(`<${key}${attrs(record)}/>`);
      }
    }
  }
  const open = `<${fn}${attrs(answer)}`;
  return `<?xml version="1.0" encoding="UTF-8"?>\n${children.length === 0 ? `${open}/>` : `${open}>${children.join("")}</${fn}>`}\n`;
}

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}
