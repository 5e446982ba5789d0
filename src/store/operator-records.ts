import type { AuditDraft } from "./ports/audit.js";
import type { NewHistory } from "./ports/writes.js";

/**
 * What the store writes in words for an operator, decided inside the transaction that writes it:
 * an IP-change counter reset's history entry, and the audit entries of a change that did not
 * apply. On the store's floor because both dialects' services write them.
 */

/** The history entry of an IP-change counter reset. */
export function ipChangesResetHistory(actor: string, was: number): NewHistory {
  return { action: "IP changes reset", detail: `IP-change counter reset by ${actor} (from ${was} to 0)` };
}

/** The drafts of a change that did not apply because its service changed meanwhile, saying so. */
export function refusedAsChanged(drafts: readonly AuditDraft[] | undefined): AuditDraft[] {
  return (drafts ?? []).map((d) => ({ ...d, detail: `${d.detail ? `${d.detail}; ` : ""}not done: the service changed meanwhile` }));
}
