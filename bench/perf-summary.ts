// Where a server's CPU went, from a `perf record -g` of it (BENCH_PERF_DIR, perf-window.ts):
//   npx tsx bench/perf-summary.ts <file.perf.data> [--per N --unit order] [--top 20] [--groups 30]
// On-CPU samples of every thread, the kernel's part included. Prints: the threads (the event
// loop, the thread pool, V8's helpers); the top functions by self time; self time by kind
// (our dist/ folders, each package, Node's JavaScript, V8's GC and compilers, SQLite, the
// kernel by the system call that entered it); and every sample charged to the nearest
// JavaScript frame of ours on its stack, so SQLite's, a library's or the kernel's work counts to
// the folder of ours that asked for it (a sample with no frame of ours: to the nearest package);
// and the tier of the JavaScript that ran (interpreted, baseline, optimised), which tells whether
// the process was warm.
import { execFileSync } from "node:child_process";
import { parseArgs } from "node:util";

interface Frame {
  sym: string;
  dso: string;
}
interface Sample {
  pid: number;
  tid: number;
  ns: number;
  frames: Frame[];
}

function readSamples(file: string): Sample[] {
  const text = execFileSync("perf", ["script", "-i", file, "-F", "pid,tid,period,ip,sym,dso"], { maxBuffer: 1 << 30, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  const samples: Sample[] = [];
  let current: Sample | undefined;
  for (const line of text.split("\n")) {
    const head = /^\s*(\d+)\/(\d+)\s+(\d+)\s*$/.exec(line);
    if (head) {
      current = { pid: Number(head[1]), tid: Number(head[2]), ns: Number(head[3]), frames: [] };
      samples.push(current);
      continue;
    }
    const frame = /^\s+[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$/.exec(line);
    if (frame && current) current.frames.push({ sym: frame[1]!.replace(/\+0x[0-9a-f]+$/, ""), dso: frame[2]! });
  }
  return samples;
}

/**
 * A JavaScript frame, named by the perf map node writes. The map only grows: code that V8 freed
 * (a module's top-level function, run once at start-up) keeps its entry, and the address may
 * now hold other code. A module's top level (`…:1:1`) does not run in a measured window, so such
 * a name is taken as stale and the frame as unnamed JavaScript.
 */
const isJs = (f: Frame) => f.dso.includes("perf-") && f.dso.endsWith(".map") && !/:1:1$/.test(f.sym);
const isStaleJs = (f: Frame) => f.dso.includes("perf-") && f.dso.endsWith(".map") && /:1:1$/.test(f.sym);
/** The file of a JavaScript frame: `JS:*name file:///…/dist/store/sqlite/jobs.js:86:22`. */
const fileOf = (f: Frame) => /\s(\S+):\d+:\d+$/.exec(f.sym)?.[1] ?? "";

/** What a JavaScript file belongs to: `our:<folder>` (dist/ or bench/), a package, or Node's own. */
function jsModule(file: string): string {
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file);
  if (nm) return nm[1]!;
  const ours = /\/dist\/(?:(.+)\/)?[^/]+\.js$/.exec(file);
  if (ours) return `our:${ours[1] ?? "(top)"}`;
  if (/\/bench\//.test(file)) return "bench";
  const internal = /^node:(?:internal\/)?([^/]+)/.exec(file);
  if (internal) return `node:${internal[1]!.replace(/\.js$/, "")}`;
  return file || "(js)";
}

const GC = /Heap|Scavenge|MarkCompact|Mark(ing)?Visitor|Sweeper|MinorMC|GCTracer|Evacuat|ConcurrentMarking|MemoryAllocator|MemoryChunk|PagedSpace|NewSpace|LargeObjectSpace|RememberedSet|SlotSet|WeakObjects|MarkBit|Marking/;
const COMPILER = /compiler::|Compiler|Compile|baseline::|maglev::|Maglev|Turbofan|turboshaft|Parser|Parse|Bytecode|interpreter::|Scanner|AstNode|Zone::|RegExpCompiler|CodeGenerator|Assembler|InstructionSelector/;

/** The kind of a leaf frame. Kernel time is named by the system call (the first user frame above it). */
function kindOf(s: Sample, i = 0): string {
  const f = s.frames[i];
  if (!f) return "(unknown)";
  if (isJs(f)) return jsModule(fileOf(f));
  if (isStaleJs(f)) return "(JavaScript, stale name)";
  if (f.dso.includes("kernel")) {
    const user = s.frames.find((x) => !x.dso.includes("kernel"));
    return user ? `kernel: ${syscallName(user)}` : "kernel: (no user frame)";
  }
  if (f.dso.includes("better_sqlite3")) return "SQLite (better-sqlite3)";
  if (f.dso.includes("libc")) return `libc ${/mem|str/.test(f.sym) ? "(memcpy, strings)" : /malloc|free|alloc/.test(f.sym) ? "(malloc)" : ""}`.trim();
  if (f.dso.includes("libcrypto") || f.dso.includes("libssl") || /OPENSSL|EVP_|SHA256|sha256|HMAC/.test(f.sym)) return "OpenSSL";
  if (/node$/.test(f.dso) || f.dso.includes("/node")) {
    if (GC.test(f.sym)) return "V8: GC";
    if (COMPILER.test(f.sym)) return "V8: compilers";
    if (/^Builtins_|^Runtime_|v8::internal::/.test(f.sym)) return "V8: builtins and runtime";
    if (/^uv_|^uv__/.test(f.sym)) return "libuv";
    if (/llhttp/.test(f.sym)) return "node: HTTP parser (llhttp)";
    if (/^node::/.test(f.sym)) return "node: C++";
    return "node: other native";
  }
  return f.dso.replace(/^.*\//, "");
}

/** A system call's user-space wrapper (`__libc_pwrite64`, `__GI___writev`, `fdatasync`) as a short name. */
function syscallName(f: Frame): string {
  const sym = f.sym.replace(/^(__libc_|__GI___|__GI_|__)/, "").replace(/64$|_nocancel$/, "");
  return f.dso.includes("libc") ? sym : `${sym} (${f.dso.replace(/^.*\//, "")})`;
}

/** The nearest JavaScript frame of ours on the stack, else the nearest JavaScript frame's module, else the leaf's kind. */
function askedBy(s: Sample): string {
  const js = s.frames.filter(isJs);
  const ours = js.find((f) => jsModule(fileOf(f)).startsWith("our:"));
  if (ours) return jsModule(fileOf(ours));
  if (js.length) return `(no code of ours) ${jsModule(fileOf(js[0]!))}`;
  return `(no JavaScript) ${kindOf(s)}`;
}

/** Which thread a sample ran on, by what it ran: the event loop (the process's first thread), the thread pool, V8's helpers. */
/** The nearest JavaScript function of ours on the stack, as `name dist/folder/file.js:line`. */
function ourFunction(s: Sample): string {
  const ours = s.frames.find((f) => isJs(f) && jsModule(fileOf(f)).startsWith("our:"));
  if (!ours) return askedBy(s);
  return ours.sym.replace(/^JS:[*~^+-]?/, "").replace(/file:\/\/\/.*?\/dist\//, "dist/").replace(/:\d+$/, "") || "(anonymous)";
}

function threadOf(s: Sample): string {
  if (s.tid === s.pid) return "main thread (event loop)";
  if (s.frames.some((f) => f.sym === "worker" && !f.dso.includes("kernel"))) {
    const call = s.frames.find((f) => !f.dso.includes("kernel"));
    return `libuv thread pool: ${call ? syscallName(call) : "?"}`;
  }
  const names = s.frames.map((f) => f.sym).join(" ");
  if (/OptimizingCompileDispatcher|compiler::|Compile/.test(names)) return "V8 helper threads: optimising compiler";
  if (GC.test(names)) return "V8 helper threads: GC";
  return "other threads";
}

/** The tier of the innermost JavaScript frame: V8's perf map marks interpreted `~`, baseline `^`, Maglev `+`, TurboFan `*`. */
function tierOf(s: Sample): string {
  const js = s.frames.find(isJs);
  if (!js) return "(no JavaScript frame)";
  const mark = /^JS:([*~^+-]?)/.exec(js.sym)?.[1] ?? "";
  return { "~": "interpreted (Ignition)", "^": "baseline (Sparkplug)", "+": "Maglev", "*": "optimised (TurboFan)" }[mark] ?? "other";
}

function sum<K>(samples: Sample[], key: (s: Sample) => K): [K, number][] {
  const m = new Map<K, number>();
  for (const s of samples) m.set(key(s), (m.get(key(s)) ?? 0) + s.ns);
  return [...m].sort((a, b) => b[1] - a[1]);
}

function table(rows: string[][], head: string[]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i >= 1 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join("  ").trimEnd();
  return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { per: { type: "string" }, unit: { type: "string", default: "request" }, top: { type: "string", default: "20" }, groups: { type: "string", default: "30" } },
  });
  if (positionals.length !== 1) {
    console.error("usage: tsx bench/perf-summary.ts <file.perf.data> [--per N] [--unit request] [--top 20] [--groups 30]");
    process.exit(2);
  }
  const samples = readSamples(positionals[0]!);
  const totalNs = samples.reduce((a, s) => a + s.ns, 0);
  const per = values.per ? Number(values.per) : undefined;
  const perCol = per ? [`µs/${values.unit}`] : [];
  const cells = (ns: number) => [(ns / 1e6).toFixed(0), `${((ns / totalNs) * 100).toFixed(1)}%`, ...(per ? [(ns / 1e3 / per).toFixed(1)] : [])];
  const head = ["ms", "share", ...perCol];
  const show = (title: string, rows: [string, number][], n: number, label: string) => {
    console.log(`\n## ${title}\n`);
    console.log(table(rows.slice(0, n).map(([k, ns]) => [k, ...cells(ns)]), [label, ...head]));
  };
  console.log(`${samples.length} samples, ${(totalNs / 1e6).toFixed(0)} ms of CPU (every thread)${per ? `; ${per} ${values.unit}s: ${(totalNs / 1e3 / per).toFixed(0)} µs per ${values.unit}` : ""}`);
  const groups = Number(values.groups);
  show("threads", sum(samples, threadOf), groups, "thread");
  // Much time in interpreted or baseline code (and in the compilers) means the process was not warm yet.
  show("tier of the innermost JavaScript frame", sum(samples, tierOf), groups, "tier");
  const leaf = (s: Sample) => {
    const f = s.frames[0];
    if (!f) return "(unknown)";
    const name = isJs(f) ? f.sym.replace(/^JS:[*~^+-]?/, "").replace(/file:\/\/\/.*?\/(dist|bench)\//, "$1/").replace(/\/[^ ]*node_modules\//, "") : f.sym;
    return `${name.length > 110 ? `${name.slice(0, 107)}...` : name} [${kindOf(s)}]`;
  };
  show("top functions by self time (on CPU)", sum(samples, leaf), Number(values.top), "function [kind]");
  show("self time by kind", sum(samples, (s) => kindOf(s)), groups, "kind");
  show("every sample charged to the nearest code of ours on its stack", sum(samples, askedBy), groups, "asked for by");
  show("the same, by function of ours (its own work, and what it called that is not ours)", sum(samples, ourFunction), Number(values.top), "function of ours");
}
