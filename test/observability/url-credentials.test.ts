import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/log/logger.js";
import { withoutUrlCredentials } from "../../src/log/url-credentials.js";
import { DEFAULT_SANDBOX_TOKENS } from "../../src/vocabulary/sandbox-identity.js";
import { RESELLER_CATALOGUE, startTestBridge, TEST_ADMIN_TOKEN, TEST_SECRET } from "../helpers/bridge.js";
import { freePort, readyz, spawnBridge, type ChildBridge } from "../helpers/e2e-child.js";
import { orderActive, usePairPerFile } from "../helpers/e2e-harness.js";
import { tempDirs } from "../helpers/temp-dirs.js";

/**
 * Credentials in a URL setting (issue 34, item 6): `https://user:pass@...` in RESELLER_API_URL,
 * RESELLER_LEGACY_URL, BLESTA_API_URL, HOSTBILL_API_URL and SMTP_URL, a token in a query string.
 * The service starts with them (the reseller's client sends the userinfo as Basic auth), and
 * they appear nowhere: not in the start-up configuration line, not in the unauthenticated
 * /readyz when the upstream is out of reach, not in a reseller call's debug line.
 */

const hex = (n: number) => randomBytes(n).toString("hex");

/** `url` with `userinfo@` in front of its host. */
const withUserinfo = (url: string, userinfo: string) => url.replace("://", `://${userinfo}@`);

describe("a service started with credentials in its URL settings", () => {
  const dirs = tempDirs("lb-url-credentials-");
  let child: ChildBridge | undefined;
  afterEach(async () => {
    await child?.kill();
    child = undefined;
    dirs.removeAll();
  });

  it("names none of them in the start-up log or in /readyz, whose upstream is out of reach", async () => {
    const CREDENTIALS = {
      apiUser: `apiUser${hex(4)}`,
      apiPassword: `apiPass${hex(8)}`,
      legacyToken: `legacyTok${hex(8)}`,
      blestaPassword: `blestaPw${hex(8)}`,
      hostbillKey: `hbKey${hex(8)}`,
      smtpPassword: `smtpPw${hex(8)}`,
    };
    // Ports nothing listens on: the upstream, the legacy API and the mail server are out of reach.
    const [apiPort, smtpPort] = [await freePort(), await freePort()];
    const port = await freePort();
    child = await spawnBridge({
      HOST: "127.0.0.1",
      PORT: String(port),
      DATABASE_PATH: join(dirs.make(), "bridge.db"),
      RESELLER_API_URL: `http://${CREDENTIALS.apiUser}:${CREDENTIALS.apiPassword}@127.0.0.1:${apiPort}/api/v1`,
      RESELLER_API_TOKEN: DEFAULT_SANDBOX_TOKENS.reseller,
      PRODUCTS_FILE: RESELLER_CATALOGUE,
      RESELLER_LEGACY_URL: `http://${CREDENTIALS.legacyToken}@127.0.0.1:${apiPort}`,
      RESELLER_LEGACY_TOKEN: DEFAULT_SANDBOX_TOKENS.legacy,
      // Both interfaces are then what /readyz must reach.
      RESELLER_PROTOCOL: "v2",
      BLESTA_API_URL: `https://api:${CREDENTIALS.blestaPassword}@billing.example/api`,
      BLESTA_API_USER: "api",
      BLESTA_API_KEY: "blesta-key",
      HOSTBILL_API_URL: `https://hostbill.example/admin/api.php?api_key=${CREDENTIALS.hostbillKey}`,
      HOSTBILL_API_ID: "hostbill-id",
      HOSTBILL_API_KEY: "hostbill-key",
      SMTP_URL: `smtp://mailer:${CREDENTIALS.smtpPassword}@127.0.0.1:${smtpPort}`,
      WEBHOOK_SECRETS: TEST_SECRET,
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      RESELLER_TIMEOUT_MS: "2000",
      LOG_LEVEL: "debug",
    });

    const ready = await readyz(child.url);
    const body = JSON.stringify(ready.body);
    expect(ready.status).toBe(503);
    expect(ready.body.reasons).toHaveLength(1);
    const reason = ready.body.reasons![0]!;
    expect(reason).toMatch(/^upstream: /);
    expect(reason).toContain(`http://127.0.0.1:${apiPort}/api/v1 unreachable (ECONNREFUSED)`);
    expect(reason).toContain(`http://127.0.0.1:${apiPort}/ unreachable (ECONNREFUSED)`);

    const output = child.output();
    const configuration = output.split("\n").find((l) => l.includes('"msg":"configuration"'));
    expect(configuration).toContain(`"RESELLER_API_URL":"http://****:****@127.0.0.1:${apiPort}/api/v1"`);
    expect(configuration).toContain('"HOSTBILL_API_URL":"https://hostbill.example/admin/api.php?****"');
    for (const [name, value] of Object.entries(CREDENTIALS)) {
      expect(output.includes(value), `${name} is in the log`).toBe(false);
      expect(body.includes(value), `${name} is in /readyz's answer`).toBe(false);
    }
  });
});

describe("reseller calls through URLs with credentials", () => {
  const API_PASSWORD = `apiPass${hex(8)}`;
  const LEGACY_PASSWORD = `legacyPass${hex(8)}`;
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  const pair = usePairPerFile({
    bridge: (sb) =>
      startTestBridge(sb, {
        env: {
          RESELLER_API_URL: withUserinfo(sb.running.apiUrl, `bridge:${API_PASSWORD}`),
          RESELLER_LEGACY_URL: withUserinfo(sb.running.legacyUrl, `bridge:${LEGACY_PASSWORD}`),
          LOG_LEVEL: "debug",
        },
        logger: createLogger({ level: "debug", destination, pretty: false }),
      }),
  });

  it("work, and their debug lines name the URL without the credentials", async () => {
    const { bridge } = pair();
    await orderActive(bridge);
    await bridge.service.reseller.v2!.register({ ip: "198.51.100.17", type: "cpanel", billingcycle: 1 });
    const log = chunks.join("");
    const calls = log
      .split("\n")
      .filter((l) => l.includes('"msg":"reseller call"'))
      .map((l) => (JSON.parse(l) as { url: string }).url);
    expect(calls).toContainEqual(expect.stringMatching(/^http:\/\/\[redacted\]@127\.0\.0\.1:\d+\/api\/v1\/license\/register$/));
    expect(calls).toContainEqual(expect.stringMatching(/^http:\/\/\[redacted\]@127\.0\.0\.1:\d+\/.*token=\[redacted\]/));
    expect(log).not.toContain(API_PASSWORD);
    expect(log).not.toContain(LEGACY_PASSWORD);
  });
});

describe("withoutUrlCredentials", () => {
  it("masks the whole userinfo up to the authority's last @, as a URL parser reads it, so no tail of a password is left", () => {
    expect(withoutUrlCredentials("fetch failed: https://user:p@ss@reseller.example/api/v1?x=1")).toBe("fetch failed: https://[redacted]@reseller.example/api/v1?x=1");
    expect(withoutUrlCredentials("two: http://a:b@h1/x and smtp://c@h2")).toBe("two: http://[redacted]@h1/x and smtp://[redacted]@h2");
    expect(withoutUrlCredentials("mail to ann@example.com at https://host/path@x")).toBe("mail to ann@example.com at https://host/path@x");
  });
});
