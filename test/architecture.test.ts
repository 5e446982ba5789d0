import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The shape of src/ (issue 24): folders on floors, each importing only its own floor and the
 * floors below, with no circle between folders, and a ground floor of vocabulary that imports
 * nothing of ours. Every import counts: static, dynamic and type-only.
 *
 *   0  vocabulary, clock, log, validation  words, time, logging: nothing of ours
 *   1  catalog, config, http               what the operator configured; HTTP plumbing (app, errors, auth)
 *   2  store                               the state, two dialects
 *   3  jobs                                the durable queue and its runner
 *   4  intake, reseller, providers, sandbox  the deciding core; the upstream clients; their stand-ins
 *   5  lifecycle, mail                     what each job kind does
 *   6  alerts, renewals, reconcile, observability,  around the jobs
 *      retention, adoption
 *   7  webhooks, provisioning              the ways in
 *   8  admin, console                      the operator's API and its document; the operator's console
 *   9  compose, cli                        wiring, and the command line
 */
export const FLOORS: Readonly<Record<string, number>> = {
  vocabulary: 0,
  "clock.ts": 0,
  log: 0,
  validation: 0,
  catalog: 1,
  config: 1,
  store: 2,
  jobs: 3,
  intake: 4,
  reseller: 4,
  providers: 4,
  sandbox: 4,
  lifecycle: 5,
  mail: 5,
  alerts: 6,
  renewals: 6,
  reconcile: 6,
  observability: 6,
  retention: 6,
  adoption: 6,
  http: 1,
  webhooks: 7,
  provisioning: 7,
  admin: 8,
  console: 8,
  compose: 9,
  cli: 9,
};

const SRC = resolve(import.meta.dirname, "../src");
const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*["'](\.{1,2}\/[^"']+)["']|import\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g;

function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []));
}

/** The folder (or root file) of src/ that a file belongs to. */
const roomOf = (file: string) => relative(SRC, file).split("/")[0]!;

interface Edge {
  from: string;
  to: string;
  file: string;
  imported: string;
}

function edges(): Edge[] {
  const out: Edge[] = [];
  for (const file of sourceFiles()) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2]!;
      const target = resolve(dirname(file), spec).replace(/\.js$/, ".ts");
      if (!target.startsWith(SRC)) continue;
      out.push({ from: roomOf(file), to: roomOf(target), file: relative(SRC, file), imported: relative(SRC, target) });
    }
  }
  return out;
}

describe("the floors of src/", () => {
  const all = edges();

  it("every folder of src/ has a floor", () => {
    const rooms = [...new Set(sourceFiles().map(roomOf))].sort();
    expect(rooms.filter((r) => FLOORS[r] === undefined)).toEqual([]);
  });

  it("no folder imports one on a floor above its own", () => {
    const up = all.filter((e) => FLOORS[e.to]! > FLOORS[e.from]!).map((e) => `${e.file} -> ${e.imported} (floor ${FLOORS[e.from]} -> ${FLOORS[e.to]})`);
    expect(up).toEqual([]);
  });

  it("the ground floor imports nothing of ours beyond its own folder", () => {
    const out = all.filter((e) => FLOORS[e.from] === 0 && e.from !== e.to).map((e) => `${e.file} -> ${e.imported}`);
    expect(out).toEqual([]);
  });

  it("no circle between folders", () => {
    const next = new Map<string, Set<string>>();
    for (const e of all) if (e.from !== e.to) (next.get(e.from) ?? next.set(e.from, new Set()).get(e.from)!).add(e.to);
    const cycles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const visit = (room: string, path: string[]) => {
      if (state.get(room) === "done") return;
      if (state.get(room) === "open") {
        cycles.push([...path.slice(path.indexOf(room)), room].join(" -> "));
        return;
      }
      state.set(room, "open");
      for (const to of next.get(room) ?? []) visit(to, [...path, room]);
      state.set(room, "done");
    };
    for (const room of next.keys()) visit(room, []);
    expect(cycles).toEqual([]);
  });

  it("no circle between the files of one folder", () => {
    const byFile = new Map<string, Set<string>>();
    for (const e of all) if (e.from === e.to) (byFile.get(e.file) ?? byFile.set(e.file, new Set()).get(e.file)!).add(e.imported);
    const cycles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === "done") return;
      if (state.get(file) === "open") {
        cycles.push([...path.slice(path.indexOf(file)), file].join(" -> "));
        return;
      }
      state.set(file, "open");
      for (const to of byFile.get(file) ?? []) visit(to, [...path, file]);
      state.set(file, "done");
    };
    for (const file of byFile.keys()) visit(file, []);
    expect(cycles).toEqual([]);
  });
});
