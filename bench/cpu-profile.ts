// Summarises a V8 .cpuprofile (node --cpu-prof; BENCH_CPU_PROF=dir for the bench's children):
//   npx tsx bench/cpu-profile.ts <file.cpuprofile> [--per N --unit request] [--top 20] [--inclusive name,name]
// Prints the busy time (samples that are not idle), the top functions by self time with their share
// of it, the self time by module (our folders under dist/, each package of node_modules, Node's
// internals, GC), and the time by "our code that asked for it": every sample charged to the
// nearest frame of our own dist/ on its stack, so a library's work counts to the folder that
// called it. With --per N, each line also gives µs per request (or per order). With --inclusive,
// the total time under each named function or place (`webhooks/route.js:28`), a sample counted
// once however deep the recursion. With --callers fn, fn's self time by the frames above it. With
// --diff other.cpuprofile, what changed against another profile of the same work (by module and
// by function; files compared from dist/ on, so two builds' profiles line up).
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** The module a frame belongs to: an `our:` folder of dist/ (or bench/), a package, a part of Node, or V8's own. */
export function moduleOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (url === "") {
    if (functionName === "(garbage collector)") return "(gc)";
    if (functionName === "(idle)" || functionName === "(program)" || functionName === "(root)") return functionName;
    // A native function called from JavaScript (better-sqlite3's statement methods, crypto's C++).
    return "(native)";
  }
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (nm) return nm[1]!;
  const ours = /\/(?:dist|src)\/(.+?)\/[^/]+$/.exec(url) ?? /\/(?:dist|src)\/([^/]+)$/.exec(url);
  if (ours && !url.includes("/node:")) return `our:${ours[1]!.replace(/\.js$|\.ts$/, "")}`;
  if (/\/bench\//.test(url)) return "bench";
  const internal = /^node:(?:internal\/)?([^/]+)/.exec(url);
  if (internal) return `node:${internal[1]!.replace(/\.js$/, "")}`;
  return url;
}

const isOurs = (m: string) => m.startsWith("our:");

function where(frame: CallFrame): string {
  if (!frame.url) return "";
  // From the last node_modules/, else from dist/ (so that two builds' files compare), else from bench/.
  const url = frame.url;
  const at = (dir: string) => url.lastIndexOf(`/${dir}/`);
  const from = at("node_modules") >= 0 ? at("node_modules") : at("dist") >= 0 ? at("dist") : at("src") >= 0 ? at("src") : at("bench");
  const short = from >= 0 ? url.slice(from + 1) : url;
  return `${short}:${frame.lineNumber + 1}`;
}

/** `name` is a function's name, or the end of its place: `webhooks/route.js:28`. */
const matches = (frame: CallFrame, name: string) => frame.functionName === name || (name.includes(":") && where(frame).endsWith(name));

export interface Summary {
  busyMs: number;
  idleMs: number;
  top: { name: string; where: string; module: string; ms: number; share: number }[];
  byModule: { module: string; ms: number; share: number }[];
  byCaller: { module: string; ms: number; share: number }[];
  inclusive: { name: string; ms: number; share: number }[];
  /** With `callers`: that function's self time by the stack above it (three frames, the nearest first). */
  callers: { module: string; ms: number; share: number }[];
}

export function summarise(profile: Profile, options: { top?: number; inclusive?: string[]; callers?: string } = {}): Summary {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Each sample's time: the delta to the next sample (the last one gets the mean).
  const selfUs = new Map<number, number>();
  const { samples, timeDeltas } = profile;
  const mean = (profile.endTime - profile.startTime) / Math.max(1, samples.length);
  for (let i = 0; i < samples.length; i++) {
    const dt = i + 1 < timeDeltas.length ? timeDeltas[i + 1]! : mean;
    selfUs.set(samples[i]!, (selfUs.get(samples[i]!) ?? 0) + Math.max(0, dt));
  }
  const fnSelf = new Map<string, { name: string; where: string; module: string; us: number }>();
  const modSelf = new Map<string, number>();
  const callerSelf = new Map<string, number>();
  const calledFrom = new Map<string, number>();
  const inclusive = new Map<string, number>((options.inclusive ?? []).map((n) => [n, 0]));
  let idleUs = 0;
  let busyUs = 0;
  for (const [id, us] of selfUs) {
    const node = nodes.get(id)!;
    const module = moduleOf(node.callFrame);
    if (module === "(idle)") {
      idleUs += us;
      continue;
    }
    busyUs += us;
    const key = `${node.callFrame.functionName}@${node.callFrame.url}:${node.callFrame.lineNumber}`;
    const f = fnSelf.get(key) ?? { name: node.callFrame.functionName || "(anonymous)", where: where(node.callFrame), module, us: 0 };
    f.us += us;
    fnSelf.set(key, f);
    modSelf.set(module, (modSelf.get(module) ?? 0) + us);
    // The nearest frame of ours on the stack, the sample's own first.
    let caller = isOurs(module) ? module : undefined;
    const seen = new Set<string>();
    for (let p: number | undefined = id; p !== undefined; p = parent.get(p)) {
      const frame = nodes.get(p)!.callFrame;
      if (!caller) {
        const m = moduleOf(frame);
        if (isOurs(m)) caller = m;
      }
      for (const name of inclusive.keys()) if (matches(frame, name)) seen.add(name);
    }
    for (const name of seen) inclusive.set(name, inclusive.get(name)! + us);
    if (options.callers && matches(node.callFrame, options.callers)) {
      const chain: string[] = [];
      for (let p = parent.get(id); p !== undefined && chain.length < 3; p = parent.get(p)) {
        const f = nodes.get(p)!.callFrame;
        chain.push(`${f.functionName || "(anonymous)"} ${where(f)}`.trim());
      }
      const k = chain.join(" < ");
      calledFrom.set(k, (calledFrom.get(k) ?? 0) + us);
    }
    const c = caller ?? `(no code of ours) ${module}`;
    callerSelf.set(c, (callerSelf.get(c) ?? 0) + us);
  }
  const share = (us: number) => us / busyUs;
  const sorted = (m: Map<string, number>) =>
    [...m].sort((a, b) => b[1] - a[1]).map(([module, us]) => ({ module, ms: us / 1000, share: share(us) }));
  return {
    busyMs: busyUs / 1000,
    idleMs: idleUs / 1000,
    top: [...fnSelf.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, options.top ?? 20)
      .map((f) => ({ name: f.name, where: f.where, module: f.module, ms: f.us / 1000, share: share(f.us) })),
    byModule: sorted(modSelf),
    byCaller: sorted(callerSelf),
    inclusive: [...inclusive].map(([name, us]) => ({ name, ms: us / 1000, share: share(us) })),
    callers: sorted(calledFrom),
  };
}

function table(rows: string[][], head: string[]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i >= 2 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join("  ").trimEnd();
  return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      per: { type: "string" },
      unit: { type: "string", default: "request" },
      top: { type: "string", default: "20" },
      inclusive: { type: "string" },
      groups: { type: "string", default: "25" },
      // Another profile of the same work (e.g. an earlier build's): what grew, by function and by module.
      diff: { type: "string" },
      // A function (or place): its self time by the three frames above it.
      callers: { type: "string" },
    },
  });
  if (positionals.length !== 1) {
    console.error("usage: tsx bench/cpu-profile.ts <file.cpuprofile> [--per N] [--unit request] [--top 20] [--groups 25] [--inclusive fn,fn]");
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(positionals[0]!, "utf8")) as Profile;
  const s = summarise(profile, { top: Number(values.top), inclusive: values.inclusive?.split(","), callers: values.callers });
  const per = values.per ? Number(values.per) : undefined;
  const perCol = per ? [`µs/${values.unit}`] : [];
  const perCell = (ms: number) => (per ? [((ms * 1000) / per).toFixed(1)] : []);
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  console.log(`busy ${s.busyMs.toFixed(0)} ms, idle ${s.idleMs.toFixed(0)} ms (main thread)${per ? `; ${per} ${values.unit}s: ${((s.busyMs * 1000) / per).toFixed(1)} µs busy per ${values.unit}` : ""}\n`);
  console.log("## top functions by self time\n");
  console.log(table(s.top.map((f, i) => [`${i + 1}. ${f.name}`, `${f.module} ${f.where}`.trim(), f.ms.toFixed(0), pct(f.share), ...perCell(f.ms)]), ["function", "module and place", "ms", "share", ...perCol]));
  const groups = Number(values.groups);
  console.log("\n## self time by module\n");
  console.log(table(s.byModule.slice(0, groups).map((m) => [m.module, "", m.ms.toFixed(0), pct(m.share), ...perCell(m.ms)]), ["module", "", "ms", "share", ...perCol]));
  console.log("\n## time by the nearest code of ours on the stack (a library's work counted to the folder that called it)\n");
  console.log(table(s.byCaller.slice(0, groups).map((m) => [m.module, "", m.ms.toFixed(0), pct(m.share), ...perCell(m.ms)]), ["caller", "", "ms", "share", ...perCol]));
  if (values.callers) {
    console.log(`\n## ${values.callers}: self time by the frames above it\n`);
    console.log(table(s.callers.slice(0, groups).map((m) => [m.module, "", m.ms.toFixed(0), pct(m.share), ...perCell(m.ms)]), ["called from", "", "ms", "share", ...perCol]));
  }
  if (values.diff) {
    const base = summarise(JSON.parse(readFileSync(values.diff, "utf8")) as Profile, { top: 100_000 });
    const mine = summarise(profile, { top: 100_000 });
    const delta = <T extends { ms: number }>(a: T[], b: T[], key: (x: T) => string) => {
      const m = new Map<string, [number, number]>();
      for (const x of a) m.set(key(x), [x.ms, 0]);
      for (const x of b) m.set(key(x), [m.get(key(x))?.[0] ?? 0, x.ms]);
      return [...m].map(([k, [now, before]]) => ({ k, now, before, d: now - before })).sort((x, y) => Math.abs(y.d) - Math.abs(x.d));
    };
    const rows = (list: { k: string; now: number; before: number; d: number }[]) =>
      list.slice(0, Number(values.top)).map((r) => [r.k, "", r.before.toFixed(0), r.now.toFixed(0), `${r.d >= 0 ? "+" : ""}${r.d.toFixed(0)}`, ...perCell(r.d)]);
    console.log(`\n## against ${values.diff}: busy ${base.busyMs.toFixed(0)} ms there, ${mine.busyMs.toFixed(0)} ms here\n`);
    console.log(table(rows(delta(mine.byModule, base.byModule, (x) => x.module)), ["module", "", "ms there", "ms here", "change", ...perCol]));
    console.log("");
    console.log(table(rows(delta(mine.top, base.top, (x) => `${x.name} ${x.module} ${x.where.replace(/:\d+$/, "")}`)), ["function", "", "ms there", "ms here", "change", ...perCol]));
  }
  if (s.inclusive.length) {
    console.log("\n## inclusive time of named functions\n");
    console.log(table(s.inclusive.map((m) => [m.name, "", m.ms.toFixed(0), pct(m.share), ...perCell(m.ms)]), ["function", "", "ms", "share", ...perCol]));
  }
}
