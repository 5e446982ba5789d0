import express, { type Request, type Response, type Router } from "express";
import { canonicalIp } from "../../vocabulary/ip-address.js";
import type { FaultWire } from "../faults.js";
import { MANAGE2_FUNCTIONS, MUTATING_FUNCTIONS, type Manage2Context, type Manage2Function } from "./context.js";
import { EMPTY_LICENSE, sandboxIp, type Manage2SandboxLicense, type Priced, type Result } from "./state.js";
import { licenseInfoRecord, NumberWriter, rawLookupRecord, toXml } from "./wire.js";

/**
 * Manage2's functions at `/<Function>.cgi`, GET and POST, as docs.cpanel.net/manage2/api/
 * describes them (notes/providers-research.md, part A):
 * - GET reads the query, POST the form body only ("The system ignores any variables that you
 *   pass in the string before the -d flag", the Guide to the Manage2 API); `&` and `;` both
 *   separate (the transfer page's example uses `;`);
 * - `output=json` answers JSON; anything else the default XML, in a minimal form;
 * - HTTP Basic with the account's user and password, else 401; an Access IP check when set;
 * - every answer HTTP 200 with `status` and `reason`, a refusal `status` 0;
 * - ids with or without their letter (`P001`, `008`);
 * - the defaults that are traps stay Manage2's: `force`/`reactivateok` 1 on add, `dryrun` 1 on
 *   reactivate, every licence on the IP moved by a transfer without `packageid`.
 * Order of a request, as the reseller sandbox's: recorded, then faults, then authentication.
 */

type Params = Record<string, string>;

interface Reply {
  body: Record<string, unknown>;
  /** The account changed: the only kind of answer `dropNext` drops. */
  committed?: boolean;
}

const TEXT_BODY_LIMIT = "256kb";
const EXTERNAL_NOTES_MAX = 64;

/** The legacy descriptions of the expiry codes (the twiki ExpireLicense page), the reason when none is given. */
const EXPCODE_TEXT: Readonly<Record<string, string>> = {
  normal: "Normal Cancellation - No Security Risk",
  nocomplete: "Customer did not complete transaction - No Security Risk",
  noverify: "Customer could not be verified - Security Risk",
  shutoff: "Customer did not comply with policies - Security Risk",
  chargeback: "Chargeback",
  fraud: "Fraud",
  other: "Other",
};

/** The wire of the fault middleware: a 503 page, and a change told by the route, not by the body (a transfer may say `status` 0 and have moved). */
const MANAGE2_WIRE: FaultWire = {
  unavailable: (res) => void res.status(503).type("text/html").send("<html><head><title>503 Service Unavailable</title></head><body>Service Unavailable</body></html>"),
  commits: (_status, _body, res) => res.locals.committed === true,
};

export function manage2Routes(ctx: Manage2Context): Router {
  const router = express.Router({ caseSensitive: true });
  const bodyText = express.text({ type: () => true, limit: TEXT_BODY_LIMIT });

  for (const fn of MANAGE2_FUNCTIONS) {
    const mutating = MUTATING_FUNCTIONS.has(fn);
    const handle = (req: Request, res: Response): void => {
      if (!fromAccessIp(ctx, req)) {
        res.status(403).type("text/html").send(`<html><head><title>403 Forbidden</title></head><body>${callerIp(req)} is not an Access IP of this account.</body></html>`);
        return;
      }
      if (!authorised(ctx, req)) {
        res.status(401).set("WWW-Authenticate", 'Basic realm="Manage2"').type("text/html").send("<html><head><title>401 Unauthorized</title></head><body>Authorization Required</body></html>");
        return;
      }
      const p = paramsOf(req);
      const w = new NumberWriter(ctx.dialect().numbers);
      const next = ctx.takeAnswer(fn);
      if (next && "refuse" in next) return send(res, fn, p, { status: w.n(next.status ?? 0), reason: next.refuse });
      if (next && "notExpired" in next) {
        const liscid = idOf(p.liscid, "L");
        return send(res, fn, p, { status: w.n(1), reason: "OK", result: "", ...(liscid === undefined ? {} : { licenseid: w.n(liscid, true) }) });
      }
      if (next && "http" in next) {
        res.status(next.http).type(next.contentType ?? "text/html").send(next.body ?? "");
        return;
      }
      const reply = HANDLERS[fn](ctx, p, w);
      if (reply.committed) res.locals.committed = true;
      if (next && "garble" in next) {
        const text = JSON.stringify(reply.body);
        res.status(200).type("application/json").send(text.slice(0, Math.ceil(text.length / 2)));
        return;
      }
      send(res, fn, p, reply.body);
    };
    const chain = [
      bodyText,
      ctx.requests.recorder("manage2", fn, paramsOf),
      ctx.faults.middleware({ via: MANAGE2_WIRE, mutating, onDrop: (req) => ctx.requests.markDropped(req), onHold: (req) => ctx.requests.markHeld(req) }),
      handle,
    ];
    router.route(`/${fn}.cgi`).get(chain).post(chain);
  }
  return router;
}

type Handler = (ctx: Manage2Context, p: Params, w: NumberWriter) => Reply;

const HANDLERS: Readonly<Record<Manage2Function, Handler>> = {
  XMLlicenseAdd(ctx, p, w) {
    const ip = sandboxIp(p.ip);
    if (!ip) return no(w, "Invalid IP address.");
    const packageid = idOf(p.packageid, "P");
    if (packageid === undefined) return no(w, "Invalid package id.");
    const groupid = p.groupid === undefined || p.groupid === "" ? undefined : idOf(p.groupid, "G");
    if (groupid === undefined && p.groupid !== undefined && p.groupid !== "") return no(w, "Invalid group id.");
    if (p.external_notes !== undefined && [...p.external_notes].length > EXTERNAL_NOTES_MAX) return no(w, tooLongNotes());
    // "force or reactivateok", one row of the Add page, defaulting to 1.
    const reactivateok = flag(p.reactivateok ?? p.force, true);
    const dryrun = flag(p.dryrun, false);
    const result = ctx.state.add({ ip, packageid, ...(groupid === undefined ? {} : { groupid }), reactivateok, dryrun, ...(p.external_notes === undefined ? {} : { external_notes: p.external_notes }) });
    if (!result.ok) return no(w, result.reason);
    const { license, kind } = result.value;
    const where = `${packageName(ctx, license)} license on ${license.ip} in the '${groupName(ctx, license)}' group.`;
    const reason = dryrun
      ? `Dry run: would ${kind === "reactivated" ? "reactivate" : "activate"} ${where}`
      : kind === "existing"
        ? `The ${where.slice(0, -1)} is already active.`
        : `${kind === "reactivated" ? "Reactivated" : "Activated"} ${where}`;
    return {
      committed: !dryrun && kind !== "existing",
      body: {
        ...prices(w, result.value),
        status: w.n(1),
        yearly: w.n(0),
        reason,
        promoinfo: "",
        ...(dryrun ? {} : { licenseid: w.n(license.licenseid, true) }),
      },
    };
  },

  XMLlicenseExpire(ctx, p, w) {
    const liscid = idOf(p.liscid, "L");
    if (liscid === undefined) return no(w, EMPTY_LICENSE);
    const expcode = p.expcode === undefined || p.expcode === "" ? "normal" : p.expcode;
    const why = EXPCODE_TEXT[expcode];
    if (why === undefined) return no(w, "Invalid expcode.");
    const reasonGiven = p.reason !== undefined && p.reason.trim() !== "" ? p.reason.trim() : why;
    const result = ctx.state.expire(liscid, reasonGiven);
    if (!result.ok) return no(w, result.reason);
    const l = result.value;
    const sentence = `Expired ${packageName(ctx, l)} license ${l.licenseid} in the '${groupName(ctx, l)}' group on ${l.ip} for reason: ${reasonGiven}`;
    return { committed: true, body: { status: w.n(1), reason: sentence.endsWith(".") ? sentence : `${sentence}.`, result: "OK", licenseid: w.n(l.licenseid, true) } };
  },

  XMLlicenseReActivate(ctx, p, w) {
    const liscid = idOf(p.liscid, "L");
    if (liscid === undefined) return no(w, EMPTY_LICENSE);
    // The page's table: dryrun "defaults to 1". The examples send none and show a reactivation; the sandbox keeps the table.
    const dryrun = flag(p.dryrun, true);
    const result = ctx.state.reactivate(liscid, dryrun);
    if (!result.ok) return no(w, result.reason);
    const { license: l, price } = result.value;
    const reason = dryrun
      ? `Dry run: reactivating ${packageName(ctx, l)} license ${l.licenseid} on ${l.ip} would bill ${price.toFixed(2)}.`
      : `Reactivated ${packageName(ctx, l)} license on ${l.ip} in the '${groupName(ctx, l)}' group.`;
    return { committed: !dryrun, body: { ...prices(w, result.value), status: w.n(1), reason, licenseid: w.n(l.licenseid, true) } };
  },

  XMLtransfer(ctx, p, w) {
    const oldip = sandboxIp(p.oldip);
    if (!oldip) return no(w, "Invalid old IP address.");
    const newip = sandboxIp(p.newip);
    if (!newip) return no(w, "Invalid new IP address.");
    const packageid = p.packageid === undefined || p.packageid === "" ? undefined : idOf(p.packageid, "P");
    if (packageid === undefined && p.packageid !== undefined && p.packageid !== "") return no(w, "Invalid package id.");
    const dryrun = flag(p.dryrun, false);
    const result = ctx.state.transfer({ oldip, newip, ...(packageid === undefined ? {} : { packageid }), dryrun });
    if (!result.ok) return no(w, result.reason);
    const said = result.value
      .map((l) => `${dryrun ? "Dry run: would transfer" : "Transferred"} ${packageName(ctx, l)} license ${l.licenseid} in the '${groupName(ctx, l)}' group on ${oldip} to ${newip}.`)
      .join(" ");
    return { committed: !dryrun, body: { status: w.n(dryrun ? 1 : ctx.dialect().transferStatus), reason: said, oldip, newip } };
  },

  XMLpackageUpdate(ctx, p, w) {
    const ip = sandboxIp(p.ip);
    if (!ip) return no(w, "Invalid IP address.");
    const newpackageid = idOf(p.newpackageid, "P");
    if (newpackageid === undefined) return no(w, "Invalid new package id.");
    const oldpackageid = p.oldpackageid === undefined || p.oldpackageid === "" ? undefined : idOf(p.oldpackageid, "P");
    if (oldpackageid === undefined && p.oldpackageid !== undefined && p.oldpackageid !== "") return no(w, "Invalid old package id.");
    const result = ctx.state.packageUpdate({ ip, newpackageid, ...(oldpackageid === undefined ? {} : { oldpackageid }) });
    if (!result.ok) return no(w, result.reason);
    return { committed: true, body: { status: w.n(1), reason: `Updated package on ${ip} from ${result.value.from.name} to ${result.value.to.name}.` } };
  },

  XMLupdateActiveLicenseMetadata(ctx, p, w) {
    const liscid = idOf(p.liscid, "L");
    if (liscid === undefined) return no(w, EMPTY_LICENSE);
    if (p.external_notes === undefined) return no(w, "The external_notes parameter is required.");
    if ([...p.external_notes].length > EXTERNAL_NOTES_MAX) return no(w, tooLongNotes());
    const result = ctx.state.updateMetadata(liscid, p.external_notes);
    if (!result.ok) return no(w, result.reason);
    return { committed: true, body: { status: w.n(1), reason: "Updated license metadata" } };
  },

  XMLlicenseInfo(ctx, p, w) {
    const expired = flag(p.expired, false);
    const wanted = (l: Manage2SandboxLicense): boolean => (expired ? l.status !== 1 : l.status === 1);
    const filters: Array<(l: Manage2SandboxLicense) => boolean> = [wanted];
    if ((p.groupid && p.group) || (p.packageid && p.package)) return no(w, "Give either the id or the name of a group or package, not both.");
    if (p.groupid) filters.push((l) => l.groupid === idOf(p.groupid, "G"));
    if (p.group) filters.push((l) => groupName(ctx, l) === p.group);
    if (p.packageid) filters.push((l) => l.packageid === idOf(p.packageid, "P"));
    if (p.package) filters.push((l) => packageName(ctx, l) === p.package);
    if (p.liscid) filters.push((l) => l.licenseid === idOf(p.liscid, "L"));
    const found = ctx.state.licenses().filter((l) => filters.every((f) => f(l)));
    const records = Object.fromEntries(found.map((l) => [`L${l.licenseid}`, licenseInfoRecord(w, l, ctx.state.package(l.packageid))]));
    const empty = ctx.dialect().emptyLicenses;
    const licenses = found.length > 0 ? { licenses: records } : empty === "missing" ? {} : { licenses: empty === "array" ? [] : {} };
    return { body: { ...licenses, reason: "OK", status: w.n(1), version: w.n(0.7) } };
  },

  XMLlookup(ctx, p, w) {
    const found = activeOn(ctx, p);
    if (!found.ok) return no(w, found.reason);
    const ids = found.value.map((l) => w.n(l.licenseid, true));
    if (ids.length === 0 && ctx.dialect().lookupNone === "status0") return no(w, `No license found on ${p.ip}.`);
    const licenseid = ids.length === 0 ? {} : { licenseid: ids.length === 1 ? ids[0] : ids };
    return { body: { status: w.n(1), reason: "OK", ...licenseid, version: w.n(0.3) } };
  },

  XMLRawlookup(ctx, p, w) {
    const found = activeOn(ctx, p);
    if (!found.ok) return no(w, found.reason);
    return { body: { status: w.n(1), reason: "OK", license: found.value.map((l) => rawLookupRecord(w, l)) } };
  },

  XMLpackageInfo(ctx, _p, w) {
    const map = Object.fromEntries(ctx.state.packages().map((pkg) => [`P${pkg.id}`, pkg.name]));
    return { body: { packages: ctx.dialect().packages === "array" ? [map] : map, reason: "OK", status: w.n(1), version: w.n(0.3) } };
  },

  XMLgroupInfo(ctx, _p, w) {
    const groups = Object.fromEntries(ctx.state.groups().map((g) => [`G${g.id}`, g.name]));
    return { body: { version: w.n(0.5, true), status: w.n(1), groups, reason: "OK" } };
  },
};

/** XMLlookup's and XMLRawlookup's licences: the active ones on `ip` (of `packageid` when given), the first only unless `all`. */
function activeOn(ctx: Manage2Context, p: Params): Result<Manage2SandboxLicense[]> {
  const ip = sandboxIp(p.ip);
  if (!ip) return { ok: false, reason: "Invalid IP address." };
  const packageid = p.packageid ? idOf(p.packageid, "P") : undefined;
  const found = ctx.state.licenses().filter((l) => l.status === 1 && l.ip === ip && (packageid === undefined || l.packageid === packageid));
  return { ok: true, value: flag(p.all, false) ? found : found.slice(0, 1) };
}

function prices(w: NumberWriter, priced: Priced): Record<string, unknown> {
  return { monthly_price: w.money(priced.monthly_price), price: w.money(priced.price) };
}

function no(w: NumberWriter, reason: string): Reply {
  return { body: { status: w.n(0), reason } };
}

const tooLongNotes = (): string => `The external_notes parameter must be ${EXTERNAL_NOTES_MAX} characters or fewer.`;

const packageName = (ctx: Manage2Context, l: Manage2SandboxLicense): string => ctx.state.package(l.packageid)?.name ?? String(l.packageid);
const groupName = (ctx: Manage2Context, l: Manage2SandboxLicense): string => ctx.state.group(l.groupid)?.name ?? String(l.groupid);

/** An id with or without its letter, leading zeros allowed (`P001`, `008`). */
function idOf(value: string | undefined, letter: "L" | "P" | "G"): number | undefined {
  const m = value === undefined ? null : new RegExp(`^${letter}?(\\d{1,15})$`, "i").exec(value.trim());
  if (!m) return undefined;
  const n = Number(m[1]);
  return n > 0 ? n : undefined;
}

/** Manage2's Booleans are 1 and 0. */
function flag(value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value.trim() === "") return fallback;
  return /^(1|true|yes|on)$/i.test(value.trim());
}

/** The call's parameters: the query under GET, the form body alone under POST; `&` or `;` between them. */
export function paramsOf(req: Request): Params {
  const raw = req.method === "POST" ? (typeof req.body === "string" ? req.body : "") : (req.originalUrl.split("?")[1] ?? "").split("#")[0]!;
  const out: Params = Object.create(null) as Params;
  for (const pair of raw.split(/[&;]/)) {
    if (pair === "") continue;
    const eq = pair.indexOf("=");
    out[decode(eq < 0 ? pair : pair.slice(0, eq))] = eq < 0 ? "" : decode(pair.slice(eq + 1));
  }
  return out;
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    return text;
  }
}

function send(res: Response, fn: Manage2Function, p: Params, body: Record<string, unknown>): void {
  if ((p.output ?? "").toLowerCase() === "json") res.status(200).type("application/json").send(JSON.stringify(body));
  else res.status(200).type("text/xml").send(toXml(fn, body));
}

function authorised(ctx: Manage2Context, req: Request): boolean {
  const header = req.get("authorization") ?? "";
  const m = /^Basic\s+(\S+)$/i.exec(header);
  if (!m) return false;
  const decoded = Buffer.from(m[1]!, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon >= 0 && decoded.slice(0, colon) === ctx.credentials.user && decoded.slice(colon + 1) === ctx.credentials.password;
}

function callerIp(req: Request): string {
  const remote = req.socket.remoteAddress ?? "";
  return canonicalIp(remote) ?? remote;
}

function fromAccessIp(ctx: Manage2Context, req: Request): boolean {
  return ctx.accessIps === undefined || ctx.accessIps.includes(callerIp(req));
}
