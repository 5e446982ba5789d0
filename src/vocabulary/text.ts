/**
 * Text the bridge shows to people or takes from them: the article before a word, and the
 * characters a name must not carry.
 */

/**
 * "a viewer", "an operator", "an imunify360": chosen by the first letter, which is right for
 * every word the bridge puts after an article (roles, licence types); none of them starts with a
 * silent h or a vowel said as a consonant ("a unit").
 */
export function withArticle(word: string): string {
  return `${/^[aeiou]/i.test(word) ? "an" : "a"} ${word}`;
}

/**
 * Characters that change how the text around them is shown without being shown themselves:
 * the bidirectional controls (U+202E RIGHT-TO-LEFT OVERRIDE turns "Ann elpmaxe" into what reads
 * as another name, or a file name's extension around) and the other invisible format characters
 * (Unicode's Cf). Except the zero-width joiners U+200C and U+200D, without which Persian, the
 * Indic scripts and many emoji cannot be written at all.
 */
const FORMAT_CONTROL = /(?![\u200c\u200d])\p{Cf}/u;
/** Control characters (C0, DEL, C1) and the line and paragraph separators: line breaks in disguise. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** The first invisible format character in `text`, as `U+202E`; undefined when there is none. */
export function formatControlIn(text: string): string | undefined {
  const found = FORMAT_CONTROL.exec(text)?.[0];
  return found === undefined ? undefined : `U+${found.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
}

/** Whether `text` holds a control character or a line or paragraph separator. */
export const hasControlCharacter = (text: string): boolean => CONTROL.test(text);

/**
 * `text` without control characters and invisible format characters, for a name shown in a
 * header (a mail's display name): what the intake refuses today may be in a row written before.
 */
export function withoutControls(text: string): string {
  return text.replace(new RegExp(`${CONTROL.source}|${FORMAT_CONTROL.source}`, "gu"), "");
}
