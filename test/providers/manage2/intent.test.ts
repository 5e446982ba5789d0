import { describe, expect, it } from "vitest";
import { carriesIntent, EXTERNAL_NOTES_MAX, intentNote, intentTokenIn } from "../../../src/providers/manage2/index.js";

describe("the bridge's intent in external_notes", () => {
  it("is lb: and the intent id, when it fits", () => {
    expect(intentNote("svc-42")).toBe("lb:svc-42");
    expect(carriesIntent("lb:svc-42", "svc-42")).toBe(true);
  });

  it("is recognised among other words, and only as a whole word", () => {
    expect(carriesIntent("moved lb:svc-42 by hand", "svc-42")).toBe(true);
    expect(carriesIntent("lb:svc-421", "svc-42")).toBe(false);
    expect(carriesIntent("xlb:svc-42", "svc-42")).toBe(false);
    expect(intentTokenIn("note lb:abc")).toBe("abc");
  });

  it("is not found in empty notes", () => {
    expect(carriesIntent(null, "svc-42")).toBe(false);
    expect(carriesIntent("", "svc-42")).toBe(false);
    expect(intentTokenIn(undefined)).toBeUndefined();
  });

  it("writes an id too long for 64 characters as a digest, the same every time", () => {
    const long = "s".repeat(64);
    const note = intentNote(long);

    expect(note).toMatch(/^lb:~[A-Za-z0-9_-]{22}$/);
    expect([...note].length).toBeLessThanOrEqual(EXTERNAL_NOTES_MAX);
    expect(intentNote(long)).toBe(note);
    expect(carriesIntent(note, long)).toBe(true);
    expect(carriesIntent(note, `${long}x`)).toBe(false);
  });

  it("writes an id of other characters as a digest too", () => {
    expect(intentNote("svc 42/ü")).toMatch(/^lb:~/);
    expect(carriesIntent(intentNote("svc 42/ü"), "svc 42/ü")).toBe(true);
  });

  it("refuses an empty id", () => {
    expect(() => intentNote("")).toThrow(TypeError);
  });
});
