/**
 * The error of a `.max(n)` on a string, saying the limit and how far over it the value is
 * ("must be at most 64 characters (this one has 6000)"), not zod's "Too big: expected string to
 * have <=64 characters".
 */
export const atMost = (max: number) => ({
  error: (issue: { input?: unknown }) => `must be at most ${max} characters (this one has ${String(issue.input).length})`,
});
