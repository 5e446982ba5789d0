import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MALFORMED_HEAD_CHARS, readBody, streamedBody, type Answer } from "../../src/reseller/answer-body.js";
import { listedOf } from "../../src/reseller/answers.js";
import { listJsonStream, parseListJson, type Keep } from "../../src/reseller/list-json.js";

// The licence list read as it arrives (issue 25): the answer's text is never held whole, so the
// parser is fed pieces cut anywhere, and the transport's reading of the body (JSON or text,
// malformed or not, our token scrubbed) must come out as it does for the whole text.

const TOKEN = "tok_SECRET_4711_abcdef";

/** [from, to) of each piece of a length cut at these places (any order, repeats allowed), in order. */
function pieces(length: number, cuts: number[]): [number, number][] {
  const at = [...new Set(cuts.map((c) => c % (length + 1)))].sort((a, b) => a - b);
  return [0, ...at].map((from, i) => [from, at[i] ?? length]);
}

/** The text cut at these places, pushed piece by piece. */
function inPieces(text: string, cuts: number[], keep: Keep = listedOf): unknown {
  const stream = listJsonStream(keep);
  for (const [from, to] of pieces(text.length, cuts)) stream.push(text.slice(from, to));
  return stream.end();
}

/** What the parser gives, or the SyntaxError it throws. */
function outcome(read: () => unknown): unknown {
  try {
    return { value: read() };
  } catch (error) {
    return { threw: error instanceof SyntaxError ? "SyntaxError" : String(error) };
  }
}

const text = fc.string({ unit: fc.constantFrom("a", "0", " ", '"', "\\", "{", "}", "[", "]", ",", ":", "é", "😀", "\n") });
const item = fc.record(
  {
    ip: fc.constantFrom("203.0.113.10", "2001:DB8::1", "::ffff:198.18.0.1", ""),
    type: fc.constantFrom("cpanel", "litespeed", "cloudlinux"),
    status: fc.oneof(text, fc.constant("active")),
    expires_at: fc.oneof(fc.constant("2030-01-01T00:00:00.000Z"), fc.integer({ min: 0, max: 2e9 })),
    free: fc.oneof(fc.boolean(), fc.constantFrom(0, 1, "yes")),
    extra: fc.jsonValue(),
  },
  { requiredKeys: ["ip", "type"] },
);
const answerBody = fc.oneof(
  fc.array(fc.oneof(item, fc.jsonValue())),
  fc.record({ success: fc.boolean(), message: text, data: fc.array(item) }),
  fc.record({ data: fc.record({ licenses: fc.array(item), total: fc.nat() }), other: fc.jsonValue() }),
  fc.jsonValue(),
);
const spacing = fc.constantFrom(0, 1, "\t", " \r\n ");
const cuts = fc.array(fc.nat(), { maxLength: 40 });

describe("the licence list pushed piece by piece", () => {
  it("gives what the whole text gives, however it is cut", () => {
    fc.assert(
      fc.property(answerBody, spacing, cuts, (body, space, at) => {
        const whole = JSON.stringify(body, null, space);
        expect(outcome(() => inPieces(whole, at))).toEqual(outcome(() => parseListJson(whole, listedOf)));
        // Kept whole, every item: what JSON.parse gives.
        expect(inPieces(whole, at, (x) => x)).toEqual(JSON.parse(whole));
      }),
      { numRuns: 300 },
    );
  });

  it("throws where JSON.parse throws, however it is cut: a list cut short, or broken anywhere", () => {
    fc.assert(
      fc.property(answerBody, fc.nat(), fc.constantFrom("", ",", "]", "}", "x", '"', "\u00a0"), cuts, (body, where, junk, at) => {
        const whole = JSON.stringify({ data: body });
        const cut = where % whole.length;
        const broken = whole.slice(0, cut) + junk + (junk === "" ? "" : whole.slice(cut));
        const parses = outcome(() => JSON.parse(broken));
        const read = outcome(() => inPieces(broken, at, (x) => x));
        if ("threw" in (parses as object)) expect(read).toEqual({ threw: "SyntaxError" });
        else expect(read).toEqual(parses);
      }),
      { numRuns: 300 },
    );
  });

  it("reads a value as long as many pieces, a key cut inside its escape, and a number at the end", () => {
    const note = "]}\\\"".repeat(5_000);
    const whole = `{"d\\u0061ta":[{"ip":"203.0.113.10","type":"cpanel","note":"${note}"}],"n":-1.5e3}`;
    const pieces = Array.from({ length: whole.length }, (_, i) => i);
    expect(inPieces(whole, pieces, (x) => x)).toEqual(JSON.parse(whole));
    expect(inPieces("12", [1])).toBe(12);
  });
});

const labels = ["application/json", "text/html; charset=UTF-8", null] as const;

/** The body sent in these byte chunks and read as the transport reads a streamed answer. */
function streamed(status: number, contentType: string | null, bytes: Buffer, cutsAt: number[]): Answer {
  const sink = streamedBody(status, contentType, [TOKEN], listJsonStream(listedOf));
  for (const [from, to] of pieces(bytes.length, cutsAt)) sink.write(bytes.subarray(from, to));
  return sink.end();
}

/** What the transport made of the whole text before: collected, the first byte-order mark dropped, then readBody. */
function whole(status: number, contentType: string | null, bytes: Buffer): Answer {
  const text = bytes.toString("utf8");
  return readBody(status, contentType, text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, [TOKEN], (t) => parseListJson(t, listedOf));
}

describe("an answer's body read as it arrives", () => {
  const list = `{"success":true,"data":[{"ip":"203.0.113.10","type":"cpanel","status":"suspended by ${TOKEN} – é😀","note":"${TOKEN}"}]}`;
  const bodies = [
    ["a list with our token in it", list],
    ["a list after a byte-order mark and white space, no-break spaces after it", `\ufeff \n${list}\u00a0\u2028 `],
    ["a list cut short", list.slice(0, 90)],
    ["a list with a PHP warning printed into it", `${list.slice(0, 60)}<b>Warning</b>: ${TOKEN} in /var/www${list.slice(60)}`],
    ["an HTML error page", `<html><head><title>502 Bad Gateway ${TOKEN}</title></head><body>nginx</body></html>`],
    ["shell", "[ -x /usr/local/cpanel ] && echo ok"],
    ["a plain message", `License not found for ${TOKEN}`],
    ["a JSON string", `"ok ${TOKEN}"`],
    ["white space only", " \r\n\u00a0"],
    ["nothing", ""],
  ] as const;

  it.each(bodies.flatMap(([what, body]) => labels.map((label) => [what, label, body] as const)))(
    "gives what readBody gives for the whole text, cut at every byte: %s, labelled %s",
    (_what, label, body) => {
      const bytes = Buffer.from(body, "utf8");
      const expected = whole(200, label, bytes);
      for (let cut = 0; cut <= bytes.length; cut++) expect(streamed(200, label, bytes, [cut])).toEqual(expected);
      fc.assert(
        fc.property(cuts, (at) => {
          expect(streamed(200, label, bytes, at)).toEqual(expected);
        }),
        { numRuns: 50 },
      );
      expect(JSON.stringify(expected)).not.toContain(TOKEN.slice(4));
    },
  );

  it("keeps of a long malformed body its beginning, with no part of a secret the cut went through", () => {
    const opening = `{"data":[{"ip":"203.0.113.10","type":"cpanel","note":"${"n".repeat(MALFORMED_HEAD_CHARS)}`;
    // Our token (URL-encoded, as a query string would carry it) across the end of the kept head.
    const encoded = encodeURIComponent(`${TOKEN}/+`);
    for (const secret of [TOKEN, encoded]) {
      for (const shift of [1, 5, secret.length - 1]) {
        const padded = opening.slice(0, MALFORMED_HEAD_CHARS - shift);
        const body = `${padded}${secret}"}, <b>Fatal error</b>`;
        const answer = streamedBody(200, "application/json", [TOKEN, `${TOKEN}/+`], listJsonStream(listedOf));
        for (let at = 0; at < body.length; at += 65_536) answer.write(Buffer.from(body.slice(at, at + 65_536)));
        const read = answer.end();
        expect(read).toMatchObject({ status: 200, isJson: false, malformedJson: true });
        expect(read.body).toBe(padded);
      }
    }
  });
});
