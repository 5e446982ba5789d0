/**
 * JSON.parse for the licence list's answer, fed piece by piece as the answer arrives, that keeps
 * of each licence only what `keep` makes of it. The list of a large book is tens of MB: held
 * whole as one text and parsed whole into a tree of full items, it took the process's peak
 * memory with it (issue 25). Here each item of an array where the list may be (the places
 * `readLicenseList` looks, see LIST_KEYS) is parsed on its own and handed to `keep` at once, so
 * only the kept records outlive it, and of the text only the piece not yet read is held. Every
 * other value is parsed as JSON.parse would, and what is not JSON throws a SyntaxError as
 * JSON.parse does, however the text was cut into pieces.
 */

/** Where a list answer holds its array: the top level, `data`, `licenses`/`licences`, and the same under an object `data`. */
const LIST_KEYS: ReadonlySet<string> = new Set(["data", "licenses", "licences"]);

export type Keep = (item: unknown) => unknown;

/** A JSON text read piece by piece. */
export interface JsonStream {
  /** The next piece of the text; throws a SyntaxError as soon as the text cannot be JSON. */
  push(piece: string): void;
  /** The value of the whole text; throws a SyntaxError if the text ended before its value did. */
  end(): unknown;
}

export function listJsonStream(keep: Keep): JsonStream {
  return new ListJsonStream(keep);
}

/** The whole text at once: what the stream gives for it in one piece. */
export function parseListJson(text: string, keep: Keep): unknown {
  const stream = listJsonStream(keep);
  stream.push(text);
  return stream.end();
}

/** Which level of the answer a value is at: the top, an object `data` at the top, or anything deeper (parsed whole). */
type Level = "top" | "data" | "leaf";

interface ObjectFrame {
  kind: "object";
  level: "top" | "data";
  out: Record<string, unknown>;
  expect: "first-key" | "key" | "colon" | "value" | "next";
  key: string;
}

interface ListFrame {
  kind: "list";
  out: unknown[];
  expect: "first-item" | "item" | "next";
}

/**
 * A value read whole (by JSON.parse, once its end is found): an item of the list, a key, or any
 * value below the places a list may be. Its text may run over several pieces.
 */
interface Whole {
  /** A string (a key is one), an object or array, or a number or literal. */
  shape: "string" | "nested" | "bare";
  /** What it is for: a key of the open object, or a value of the open frame. */
  role: "key" | "value";
  /** Its text in the pieces before the current one. */
  before: string[];
  /** Where it starts in the current piece (0 when it began in an earlier one). */
  start: number;
  /** How far the end was looked for (in the current piece). */
  scanned: number;
  /** Brackets open (nested), a string open inside it, a backslash just seen. */
  depth: number;
  inString: boolean;
  escaped: boolean;
}

const isJsonSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const isDelimiter = (c: number) => c === 0x2c || c === 0x7d || c === 0x5d || isJsonSpace(c);

class ListJsonStream implements JsonStream {
  private readonly frames: Array<ObjectFrame | ListFrame> = [];
  private started = false;
  private done = false;
  private result: unknown;
  private whole: Whole | undefined;
  /** The current piece, where reading is in it, and how much text came before it (for messages). */
  private t = "";
  private at = 0;
  private offset = 0;

  constructor(private readonly keep: Keep) {}

  push(piece: string): void {
    this.t = piece;
    this.at = 0;
    while (this.at < piece.length) {
      if (this.whole) {
        if (!this.scanWhole(this.whole)) break;
        continue;
      }
      const c = piece.charCodeAt(this.at);
      if (isJsonSpace(c)) this.at++;
      else this.step(c);
    }
    // A value not yet ended keeps its text so far; the rest of the piece is read.
    if (this.whole) {
      this.whole.before.push(piece.slice(this.whole.start));
      this.whole.start = 0;
      this.whole.scanned = 0;
    }
    this.offset += piece.length;
    this.t = "";
  }

  end(): unknown {
    // A number or literal ends where the text does.
    const w = this.whole;
    if (w && w.shape === "bare") {
      this.whole = undefined;
      this.deliver(w.role, JSON.parse(w.before.join("")));
    }
    if (!this.done || this.whole) throw new SyntaxError("Unexpected end of JSON input");
    return this.result;
  }

  private fail(): never {
    throw new SyntaxError(`Unexpected token in JSON at position ${this.offset + this.at}`);
  }

  /** One structural character outside any value read whole. */
  private step(c: number): void {
    const frame = this.frames[this.frames.length - 1];
    if (!frame) {
      if (this.started) this.fail();
      this.started = true;
      this.value(c, "top", true);
      return;
    }
    if (frame.kind === "list") {
      if (frame.expect === "next") {
        this.at++;
        if (c === 0x2c /* , */) frame.expect = "item";
        else if (c === 0x5d /* ] */) this.close();
        else this.fail();
      } else if (c === 0x5d && frame.expect === "first-item") {
        this.at++;
        this.close();
      } else {
        this.begin("value");
      }
      return;
    }
    switch (frame.expect) {
      case "first-key":
      case "key":
        if (c === 0x7d /* } */ && frame.expect === "first-key") {
          this.at++;
          this.close();
        } else if (c === 0x22 /* " */) this.begin("key");
        else this.fail();
        return;
      case "colon":
        if (c !== 0x3a /* : */) this.fail();
        this.at++;
        frame.expect = "value";
        return;
      case "value":
        this.value(c, frame.level === "top" && frame.key === "data" ? "data" : "leaf", LIST_KEYS.has(frame.key));
        return;
      case "next":
        this.at++;
        if (c === 0x2c) frame.expect = "key";
        else if (c === 0x7d) this.close();
        else this.fail();
    }
  }

  /** The value starting here: an array in a list's place item by item, an object that may hold one key by key, the rest whole. */
  private value(c: number, level: Level, listPlace: boolean): void {
    if (c === 0x5b /* [ */ && listPlace) {
      this.at++;
      this.frames.push({ kind: "list", out: [], expect: "first-item" });
    } else if (c === 0x7b /* { */ && level !== "leaf") {
      this.at++;
      this.frames.push({ kind: "object", level, out: {}, expect: "first-key", key: "" });
    } else {
      this.begin("value");
    }
  }

  private begin(role: Whole["role"]): void {
    const c = this.t.charCodeAt(this.at);
    const shape = c === 0x22 ? "string" : c === 0x7b || c === 0x5b ? "nested" : "bare";
    // A number or literal is at least one character: a delimiter here is a token out of place.
    if (shape === "bare" && isDelimiter(c)) this.fail();
    // A string is scanned from inside its opening quote; an object or array from its opening bracket.
    const inString = shape === "string";
    this.whole = { shape, role, before: [], start: this.at, scanned: this.at + (inString ? 1 : 0), depth: 0, inString, escaped: false };
  }

  /**
   * Looks for the end of the value read whole, from where it last stopped: strings and brackets
   * matched, the inside left to JSON.parse to judge. Ended, it is parsed and delivered; false
   * when the piece ends first.
   */
  private scanWhole(w: Whole): boolean {
    const t = this.t;
    let i = w.scanned;
    let end = -1;
    if (w.shape === "bare") {
      while (i < t.length && !isDelimiter(t.charCodeAt(i))) i++;
      if (i < t.length) end = i;
    } else {
      let { depth, inString, escaped } = w;
      for (; i < t.length; i++) {
        const c = t.charCodeAt(i);
        if (inString) {
          if (escaped) escaped = false;
          else if (c === 0x5c /* \ */) escaped = true;
          else if (c === 0x22) {
            inString = false;
            if (w.shape === "string") {
              end = i + 1;
              break;
            }
          }
        } else if (c === 0x22) inString = true;
        else if (c === 0x7b || c === 0x5b) depth++;
        else if ((c === 0x7d || c === 0x5d) && --depth === 0) {
          end = i + 1;
          break;
        }
      }
      w.depth = depth;
      w.inString = inString;
      w.escaped = escaped;
    }
    if (end < 0) {
      w.scanned = t.length;
      this.at = t.length;
      return false;
    }
    const own = t.slice(w.start, end);
    const text = w.before.length === 0 ? own : w.before.join("") + own;
    this.whole = undefined;
    this.at = end;
    this.deliver(w.role, JSON.parse(text));
    return true;
  }

  /** A value read: to the open object (as a key or under its key), the open list (as `keep` makes it), or the top. */
  private deliver(role: Whole["role"], value: unknown): void {
    const frame = this.frames[this.frames.length - 1];
    if (!frame) {
      this.result = value;
      this.done = true;
    } else if (frame.kind === "list") {
      const kept = this.keep(value);
      if (kept !== undefined) frame.out.push(kept);
      frame.expect = "next";
    } else if (role === "key") {
      frame.key = value as string;
      frame.expect = "colon";
    } else {
      // Defined, not assigned, as JSON.parse makes them: a "__proto__" key is a key like any other.
      Object.defineProperty(frame.out, frame.key, { value, writable: true, enumerable: true, configurable: true });
      frame.expect = "next";
    }
  }

  /** The open object or list ends: it is a value of the object around it, or the top. (A list's items are read whole, so a list is never around it.) */
  private close(): void {
    this.deliver("value", this.frames.pop()!.out);
  }
}
