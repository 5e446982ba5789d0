import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/main.js";

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
    expect(names).toEqual(["serve", "migrate", "import-sqlite", "sandbox", "sub-resellers", "reseller", "trigger", "renew", "licenses", "jobs", "reconcile"]);

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
