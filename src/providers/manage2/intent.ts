import { createHash } from "node:crypto";
import { EXTERNAL_NOTES_MAX } from "./inputs.js";

/**
 * The bridge's intent in a licence's `external_notes`, so that after a lost `XMLlicenseAdd`
 * answer the licence that call made can be told from any other on the same IP and package
 * (nothing else in the call is idempotent: spec/providers.md, "Known failure modes").
 *
 * The note is `lb:<intent>`, at most 64 characters (Manage2's limit, the Add and
 * UpdateActiveLicenseMetadata pages). An intent id too long or of other characters to be
 * written whole is written as `lb:~` and a digest of it: the same id always gives the same note.
 * Recognised as a word anywhere in the notes, since an operator may add words beside it
 * (XMLupdateActiveLicenseMetadata overwrites the notes, so the bridge never edits them after).
 */

const PREFIX = "lb:";
const PLAIN = /^[A-Za-z0-9._:-]+$/;
const NOTE_WORD = /(?:^|\s)lb:([A-Za-z0-9._:~-]+)(?=\s|$)/;

/** The token an intent id is written as: the id itself when it fits, else `~` and 22 characters of its SHA-256. */
function tokenOf(intentId: string): string {
  if (intentId === "") throw new TypeError("an intent id must not be empty");
  if (PLAIN.test(intentId) && PREFIX.length + intentId.length <= EXTERNAL_NOTES_MAX) return intentId;
  return `~${createHash("sha256").update(intentId, "utf8").digest("base64url").slice(0, 22)}`;
}

/** The `external_notes` that carry `intentId`. */
export function intentNote(intentId: string): string {
  return PREFIX + tokenOf(intentId);
}

/** The intent token written in these notes, if any (as `intentNote` wrote it: an id, or `~` and a digest). */
export function intentTokenIn(notes: string | null | undefined): string | undefined {
  return notes ? NOTE_WORD.exec(notes)?.[1] : undefined;
}

/** Whether these notes carry `intentId`. */
export function carriesIntent(notes: string | null | undefined, intentId: string): boolean {
  const token = intentTokenIn(notes);
  return token !== undefined && token === tokenOf(intentId);
}
