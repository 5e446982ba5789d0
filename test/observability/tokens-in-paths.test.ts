import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/log/logger.js";
import { usePairPerFile } from "../helpers/e2e-harness.js";
import { operatorsFile } from "../helpers/operators.js";
import { rawRequest, type RawAnswer } from "../helpers/raw-http.js";
import { waitFor } from "../helpers/wait.js";

/**
 * Every token form in a request's path, id headers included (issue 34, item 5): ADMIN_TOKEN's,
 * the operators' (OPERATORS_FILE knows them only by their SHA-256), PROVISIONING_TOKEN's and
 * Blesta's path token. A careless operator pastes one where an id belongs; none of it may reach
 * a log line at any level, or an answer.
 */

const hex = (n: number) => randomBytes(n).toString("hex");

/** Fresh, so a hit can only come from this run. */
const TOKENS = {
  admin: `admin-${hex(16)}`,
  provisioning: `prov-${hex(16)}`,
  blesta: `blesta-${hex(24)}`,
  viewer: `viewer-${hex(12)}`,
  operator: `operator-${hex(12)}`,
  // As `openssl rand -base64` makes them: a slash and a plus in it.
  "admin operator": `${randomBytes(9).toString("base64")}/${hex(6)}+${hex(6)}=`,
} as const;

const operators = operatorsFile([
  { name: "vera", role: "viewer", token: TOKENS.viewer },
  { name: "otto", role: "operator", token: TOKENS.operator },
  { name: "alice", role: "admin", token: TOKENS["admin operator"] },
]);

/** Every character as %XX: what a client that over-encodes sends. */
const encoded = (s: string) => [...s].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`).join("");

/** Request-targets that carry `token` where an id belongs, as a careless operator or client spells them. */
const spellings = (token: string) => [
  `/admin/services/${token}`,
  `/admin/services/${token}/history`,
  `/admin/services/${encodeURIComponent(token)}`,
  `/admin/services/${encoded(token)}`,
  `/admin/services/${encodeURIComponent(encodeURIComponent(token))}/history?limit=5`,
  `/admin/services/${token};v=1`,
  `/admin/jobs/${token}`,
  `/console/licences/${token}`,
  `/provision/v1/${token}`,
  `/${token}`,
  `//admin//services//${token}//`,
];

/** Every 12 characters of `secret`: neither a log line nor an answer may hold one. */
const pieces = (secret: string) => Array.from({ length: secret.length - 11 }, (_, i) => secret.slice(i, i + 12));

describe("a token in a request's path or id headers", () => {
  const chunks: string[] = [];
  const answers: { target: string; answer: RawAnswer }[] = [];
  let requests = 0;
  const destination = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  const pair = usePairPerFile({
    env: { ADMIN_TOKEN: TOKENS.admin, PROVISIONING_TOKEN: TOKENS.provisioning, OPERATORS_FILE: operators, BLESTA_WEBHOOK_TOKEN: TOKENS.blesta, LOG_LEVEL: "trace" },
    logger: createLogger({ level: "trace", destination, pretty: false }),
    setup: async ({ bridge }) => {
      const send = async (target: string, headers: Record<string, string> = {}) => {
        requests++;
        const answer = await rawRequest(bridge.url, target, { method: "GET", headers: { authorization: `Bearer ${TOKENS.admin}`, ...headers } });
        answers.push({ target, answer });
      };
      for (const token of Object.values(TOKENS)) {
        for (const target of spellings(token)) await send(target);
        await send("/admin/licenses", { "x-request-id": token });
        await send("/admin/licenses", { "webhook-id": token });
      }
      await waitFor(() => chunks.join("").split("\n").filter((l) => l.includes('"msg":"request"')).length === requests, 5_000, "a request line per request");
    },
  });

  it("reaches the bridge, which logs a line per request", () => {
    pair();
    expect(answers.find((a) => a.target === `/admin/services/${TOKENS.viewer}`)?.answer.status).toBe(404);
  });

  for (const [kind, token] of Object.entries(TOKENS)) {
    it(`is not in the log at trace level, in any spelling: the ${kind} token`, () => {
      const log = chunks.join("");
      for (const piece of pieces(token)) expect(log.includes(piece), `"${piece}" of the ${kind} token is in the log`).toBe(false);
      for (const piece of pieces(encodeURIComponent(token))) expect(log.includes(piece), `"${piece}" of the ${kind} token (URL-encoded) is in the log`).toBe(false);
    });

    it(`is not echoed in an answer: the ${kind} token`, () => {
      for (const { target, answer } of answers) {
        for (const piece of pieces(token)) expect(answer.text.includes(piece), `the answer to ${target.slice(0, 80)} holds "${piece}" of the ${kind} token`).toBe(false);
      }
    });
  }

  it("keeps the rest of the path readable", () => {
    const paths = chunks
      .join("")
      .split("\n")
      .filter((l) => l.includes('"msg":"request"'))
      .map((l) => (JSON.parse(l) as { path: string }).path);
    expect(paths).toContain("/admin/services/[redacted]");
    expect(paths).toContain("/admin/services/[redacted]/history");
    expect(paths).toContain("/console/licences/[redacted]");
  });
});
