import { StringDecoder } from "node:string_decoder";
import type { BodySink } from "./connection-pool.js";
import type { JsonStream } from "./list-json.js";
import { scrubInPlace, scrubText } from "./redact.js";

/** An upstream answer's body as the client reads it: JSON when it is JSON, else text; our token scrubbed either way. */

export interface Answer {
  status: number;
  /** Parsed JSON when the body is JSON, else the text; our token scrubbed out. */
  body: unknown;
  isJson: boolean;
  /**
   * The body was labelled JSON, or opened like JSON, and does not parse: cut short, or a PHP
   * message printed into it. `body` is then its text, for the error message, never an answer.
   */
  malformedJson?: true;
}

/**
 * Shell's own openings, `[ -x ...`, `[[ ...` or `{ cmd; }`: a bracket, a space, then no JSON
 * value. A text body that opens so and is not labelled JSON is plain text, not broken JSON.
 */
const SHELL_OPENING = /^(\[\[?|\{)[ \t]+(?![\s"{}[\]\d]|-\d)/;

const isLabelledJson = (contentType: string | null): boolean => /json/i.test(contentType ?? "");

/**
 * An answer's text as JSON when it is JSON (labelled, or looking like it), as text otherwise;
 * secrets scrubbed either way. What is labelled or looks like JSON and does not parse is marked
 * `malformedJson`: a PHP upstream sends JSON as text/html unless told otherwise, so a body cut
 * short may carry either label, and read as text it would pass for a plain-text answer.
 */
export function readBody(status: number, contentType: string | null, text: string, secrets: readonly string[], parse: (text: string) => unknown = JSON.parse): Answer {
  const trimmed = text.trim();
  const labelledJson = isLabelledJson(contentType);
  if ((labelledJson || trimmed.startsWith("{") || trimmed.startsWith("[")) && trimmed !== "") {
    try {
      // The parsed body is this answer's alone: scrubbed where it lies, not copied.
      return { status, body: scrubInPlace(parse(trimmed), secrets), isJson: true };
    } catch {
      const asText = { status, body: scrubText(text, secrets), isJson: false };
      return labelledJson || !SHELL_OPENING.test(trimmed) ? { ...asText, malformedJson: true } : asText;
    }
  }
  return { status, body: scrubText(text, secrets), isJson: false };
}

/**
 * How much of a JSON body that turns out malformed is kept for its error: the text read through
 * the parser is not kept (the licence list is tens of MB), only its beginning, which is what an
 * error message and a log line show of it (an HTML error page's title, a PHP message).
 */
export const MALFORMED_HEAD_CHARS = 64 * 1024;

const SPACE = /\s/;

/**
 * The Answer `readBody` gives for the whole text, read as it arrives, the JSON through `json`:
 * only the part of the text the parser has not finished with is held, never the whole. The
 * decisions are readBody's: a body labelled JSON, or whose first character after white space
 * (String.prototype.trim's) is `{` or `[`, is JSON; anything else is collected as text and given
 * to readBody. A JSON body that does not parse keeps its first MALFORMED_HEAD_CHARS characters
 * as its text, as `malformedJson` (or as text, when it opens like shell); shorter, it is the
 * whole text, as readBody has it.
 */
export function streamedBody(status: number, contentType: string | null, secrets: readonly string[], json: JsonStream): BodySink<Answer> {
  const decoder = new StringDecoder("utf8");
  const labelledJson = isLabelledJson(contentType);
  let mode: "opening" | "json" | "text" | "malformed" = "opening";
  /** Opening: the text so far (white space only); text: the whole text. */
  let text = "";
  /** The first MALFORMED_HEAD_CHARS characters, and how many came in all. */
  let head = "";
  let seen = 0;
  /** White space at the end of the last piece, held back: the last of the answer's is trimmed, not parsed. */
  let heldSpace = "";
  let failure: unknown;

  const keepHead = (piece: string): void => {
    if (seen < MALFORMED_HEAD_CHARS) head += piece.slice(0, MALFORMED_HEAD_CHARS - seen);
    seen += piece.length;
  };
  const parse = (piece: string): void => {
    let end = piece.length;
    while (end > 0 && SPACE.test(piece[end - 1]!)) end--;
    if (end === 0) {
      heldSpace += piece;
      return;
    }
    const next = heldSpace + piece.slice(0, end);
    heldSpace = piece.slice(end);
    try {
      json.push(next);
    } catch (error) {
      mode = "malformed";
      failure = error;
    }
  };
  let opened = false;
  const take = (piece: string): void => {
    if (piece === "") return;
    if (!opened) {
      opened = true;
      // The byte-order mark a whole-text read drops.
      if (piece.charCodeAt(0) === 0xfeff) piece = piece.slice(1);
    }
    if (mode === "text") text += piece;
    else if (mode === "json") {
      keepHead(piece);
      parse(piece);
    } else if (mode === "malformed") keepHead(piece);
    else {
      text += piece;
      const first = text.search(/\S/);
      if (first < 0) return;
      if (labelledJson || text[first] === "{" || text[first] === "[") {
        mode = "json";
        keepHead(text);
        parse(text.slice(first));
        text = "";
      } else mode = "text";
    }
  };

  return {
    write: (chunk) => take(decoder.write(chunk)),
    end(): Answer {
      take(decoder.end());
      if (mode === "json") {
        try {
          return { status, body: scrubInPlace(json.end(), secrets), isJson: true };
        } catch (error) {
          mode = "malformed";
          failure = error;
        }
      }
      if (mode !== "malformed") return readBody(status, contentType, text, secrets);
      const kept = seen > head.length ? withoutCutSecret(head, secrets) : head;
      return readBody(status, contentType, kept, secrets, () => {
        throw failure;
      });
    },
  };
}

/** The text less a secret's beginning at its very end (a secret the cut went through), which scrubbing would not find. */
function withoutCutSecret(text: string, secrets: readonly string[]): string {
  const spellings = secrets.filter((s) => s.length >= 2).flatMap((s) => [s, encodeURIComponent(s)]);
  let out = text;
  // Until no spelling's beginning ends it: what is left after one cut may end in another's.
  for (let cut = true; cut; ) {
    cut = false;
    for (const secret of spellings) {
      for (let n = Math.min(secret.length - 1, out.length); n > 0 && !cut; n--) {
        if (out.endsWith(secret.slice(0, n))) {
          out = out.slice(0, -n);
          cut = true;
        }
      }
    }
  }
  return out;
}
