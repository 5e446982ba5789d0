import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/main.js";
import { EXIT } from "../../src/cli/output.js";
import { runCli } from "./helpers.js";

/** Every command under `cmd` by its path, with its help text. */
function helps(cmd: Command, path: string[] = []): Map<string, string> {
  const all = new Map([[path.join(" "), cmd.helpInformation()]]);
  for (const sub of cmd.commands) for (const [p, h] of helps(sub, [...path, sub.name()])) all.set(p, h);
  return all;
}

describe("the program for a command line", () => {
  it("that names a command defines that command alone, with the help it has in the full program", async () => {
    const full = helps(await buildProgram());
    const names = (await buildProgram()).commands.map((c) => c.name());
    expect(names).toEqual(["serve", "migrate", "import-sqlite", "sandbox", "sub-resellers", "reseller", "trigger", "renew", "licenses", "jobs", "reconcile", "prune", "adopt", "secrets", "operators", "audit", "forecast"]);

    for (const name of names) {
      const alone = await buildProgram(["node", "license-bridge", name, "--help"]);
      expect(alone.commands.map((c) => c.name())).toContain(name);
      for (const [path, help] of helps(alone)) if (path !== "") expect({ path, help }).toEqual({ path, help: full.get(path) });
    }
  });

  it("that names none (--help, help, a typo, nothing) defines every command", async () => {
    const every = (await buildProgram()).commands.length;
    for (const args of [["--help"], ["help"], ["job"], []]) {
      expect((await buildProgram(["node", "license-bridge", ...args])).commands).toHaveLength(every);
    }
  });
});

describe("the exit code of a command line that runs nothing", () => {
  const run = (args: string[]) => runCli(args, {});

  it("is 0 when help or the version was asked for", async () => {
    for (const args of [["--help"], ["help"], ["help", "licenses"], ["licenses", "--help"], ["licenses", "help"], ["--version"]]) {
      expect({ args, code: (await run(args)).code }).toEqual({ args, code: 0 });
    }
  });

  it("is the usage code, with a last line naming what is missing, when a command or subcommand is missing", async () => {
    const none = await run([]);
    expect(none.code).toBe(EXIT.usage);
    expect(none.stderr.trimEnd().split("\n").at(-1)).toMatch(/^license-bridge: .*command.*serve/);

    const licenses = await run(["licenses"]);
    expect(licenses.code).toBe(EXIT.usage);
    expect(licenses.stderr.trimEnd().split("\n").at(-1)).toMatch(/^license-bridge: licenses: .*command.*list, show/);
  });
});
