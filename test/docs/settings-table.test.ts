// The README's settings table is generated from the code (scripts/settings-table.ts): this fails
// when the two differ. The fix is `npm run docs:settings`, after editing src/config/settings-docs.ts.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { README, renderSettingsTable, settingsRows, updateReadme } from "../../scripts/settings-table.js";
import { OTHER_KNOWN_VARIABLES } from "../../src/config/load.js";
import { CONFIG_KEYS, SECRET_KEYS } from "../../src/config/schema.js";
import { RESTART_ONLY } from "../../src/config/restart-only.js";

describe("the README's settings table", () => {
  it("is what `npm run docs:settings` generates from the code", () => {
    const readme = readFileSync(README, "utf8");
    // Not toBe on the whole file: the diff of the table alone says what changed.
    const block = (text: string) => text.slice(text.indexOf("<!-- settings:start"), text.indexOf("<!-- settings:end -->"));
    expect(block(readme), "README.md's settings table is stale: run `npm run docs:settings`").toBe(block(updateReadme(readme)));
    expect(updateReadme(readme) === readme, "a generated block of README.md is stale: run `npm run docs:settings`").toBe(true);
  });

  it("has one row for every variable the code reads, schema and others", () => {
    const variables = settingsRows().map((r) => r.variable);
    expect(variables.length).toBe(new Set(variables).size);
    expect(new Set(variables)).toEqual(new Set([...CONFIG_KEYS, ...OTHER_KNOWN_VARIABLES]));
  });

  it("takes the secret and restart columns from SECRET_KEYS and RESTART_ONLY", () => {
    const rows = new Map(settingsRows().map((r) => [r.variable, r]));
    for (const key of SECRET_KEYS) expect(rows.get(key)?.secret, key).toBe(true);
    for (const key of RESTART_ONLY) expect(rows.get(key)?.takesEffect, key).toBe("restart");
    // Spot checks of defaults read from the schemas, and of a text default.
    expect(rows.get("PORT")?.default).toBe("`8080`");
    expect(rows.get("SANDBOX_PORT")?.default).toBe("`8090`");
    expect(rows.get("ALLOW_PRIVATE_IPS")?.default).toBe("`false`");
    expect(rows.get("ADMIN_TOKEN")).toMatchObject({ secret: true, liveOnly: true, takesEffect: "SIGHUP" });
  });

  it("refuses a README without its markers rather than leaving the table alone", () => {
    expect(() => updateReadme("# no markers here\n")).toThrow(/lacks the markers/);
  });

  it("keeps a cell's | from splitting the row", () => {
    const table = renderSettingsTable([{ variable: "X", meaning: "a | b", default: "unset", secret: false, liveOnly: false, takesEffect: "SIGHUP" }]);
    expect(table.split("\n")[2]).toBe("| `X` | a \\| b | unset |  |  | SIGHUP |");
  });
});
