/**
 * JSON.parse for the licence list's answer that keeps of each licence only what `keep` makes of
 * it. The list of a large book is tens of MB; parsed whole, its tree of full items lives through
 * the parse, long enough for the garbage collector to move it to the old generation, and the
 * process's peak memory followed (issue 25: +110 MB at 100,000 licences). Here each item of an
 * array where the list may be (the places `readLicenseList` looks, see LIST_PLACES) is parsed
 * on its own and handed to `keep` at once, so only the kept records outlive it; every other
 * value is parsed as JSON.parse would, and what is not JSON throws a SyntaxError as JSON.parse does.
 */

/** Where a list answer holds its array: the top level, `data`, `licenses`/`licences`, and the same under an object `data`. */
const LIST_KEYS: ReadonlySet<string> = new Set(["data", "licenses", "licences"]);

type Keep = (item: unknown) => unknown;

export function parseListJson(text: string, keep: Keep): unknown {
  const reader = new Reader(text, keep);
  const value = reader.value("top", true);
  reader.skipSpace();
  if (reader.at < text.length) reader.fail();
  return value;
}

/** Which level of the answer a value is at: the top, an object `data` at the top, or anything deeper (parsed whole). */
type Level = "top" | "data" | "leaf";

class Reader {
  at = 0;
  constructor(
    private readonly text: string,
    private readonly keep: Keep,
  ) {}

  fail(): never {
    throw new SyntaxError(`Unexpected token in JSON at position ${this.at}`);
  }

  skipSpace(): void {
    const t = this.text;
    let i = this.at;
    for (let c = t.charCodeAt(i); c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = t.charCodeAt(++i));
    this.at = i;
  }

  /** The value at this level: an array in a list's place item by item, an object that may hold one key by key, the rest whole. */
  value(level: Level, listPlace: boolean): unknown {
    this.skipSpace();
    const c = this.text.charCodeAt(this.at);
    if (c === 0x5b /* [ */ && listPlace) return this.list();
    if (c === 0x7b /* { */ && level !== "leaf") return this.object(level);
    return this.whole();
  }

  /** One value, parsed by JSON.parse from its own text. */
  private whole(): unknown {
    const start = this.at;
    this.at = this.end(start);
    return JSON.parse(this.text.slice(start, this.at));
  }

  private list(): unknown[] {
    const out: unknown[] = [];
    this.at++;
    this.skipSpace();
    if (this.text.charCodeAt(this.at) === 0x5d /* ] */) {
      this.at++;
      return out;
    }
    for (;;) {
      this.skipSpace();
      const kept = this.keep(this.whole());
      if (kept !== undefined) out.push(kept);
      this.skipSpace();
      const c = this.text.charCodeAt(this.at++);
      if (c === 0x5d /* ] */) return out;
      if (c !== 0x2c /* , */) this.fail();
    }
  }

  private object(level: "top" | "data"): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.at++;
    this.skipSpace();
    if (this.text.charCodeAt(this.at) === 0x7d /* } */) {
      this.at++;
      return out;
    }
    for (;;) {
      this.skipSpace();
      if (this.text.charCodeAt(this.at) !== 0x22 /* " */) this.fail();
      const key = this.whole() as string;
      this.skipSpace();
      if (this.text.charCodeAt(this.at++) !== 0x3a /* : */) this.fail();
      const value = this.value(level === "top" && key === "data" ? "data" : "leaf", LIST_KEYS.has(key));
      // Defined, not assigned, as JSON.parse makes them: a "__proto__" key is a key like any other.
      Object.defineProperty(out, key, { value, writable: true, enumerable: true, configurable: true });
      this.skipSpace();
      const c = this.text.charCodeAt(this.at++);
      if (c === 0x7d /* } */) return out;
      if (c !== 0x2c /* , */) this.fail();
    }
  }

  /** Where the value that starts at `start` ends: strings and brackets matched, the inside left to JSON.parse to judge. */
  private end(start: number): number {
    const t = this.text;
    let i = start;
    let c = t.charCodeAt(i);
    if (c === 0x22 /* " */) return this.stringEnd(i);
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      let depth = 0;
      for (; i < t.length; i++) {
        c = t.charCodeAt(i);
        if (c === 0x22) i = this.stringEnd(i) - 1;
        else if (c === 0x7b || c === 0x5b) depth++;
        else if ((c === 0x7d || c === 0x5d) && --depth === 0) return i + 1;
      }
      this.at = i;
      this.fail();
    }
    // A number or a literal: up to the next delimiter (JSON.parse judges what it is).
    for (; i < t.length; i++) {
      c = t.charCodeAt(i);
      if (c === 0x2c || c === 0x7d || c === 0x5d || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) break;
    }
    if (i === start) this.fail();
    return i;
  }

  private stringEnd(open: number): number {
    const t = this.text;
    for (let i = open + 1; i < t.length; i++) {
      const c = t.charCodeAt(i);
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22) return i + 1;
    }
    this.at = t.length;
    this.fail();
  }
}
