/**
 * The Store and its parts as the rest of src/ imports them: one port per file under ports/ (the
 * Store itself in ports/store.ts), the rules and words the store writes beside them. A barrel
 * only, so that the folders above import from one file as before (test/store/no-sql-outside-store
 * lets them reach src/store through this file and open.ts only); inside src/store, import the
 * file that holds the name, never this one.
 */
export { decodeCursor, eachPage, encodeCursor, PAGE_LIMIT, yieldToEventLoop, type Listing, type Page, type PageRequest } from "./paging.js";
export { licenseView, type ServiceRow } from "./service-row.js";
export { StoreUnavailableError } from "./unavailable.js";
export * from "./ports/store.js";
export * from "./ports/writes.js";
export * from "./ports/services.js";
export * from "./ports/events.js";
export * from "./ports/jobs.js";
export * from "./ports/mails.js";
export * from "./ports/alerts.js";
export * from "./ports/renewals.js";
export * from "./ports/health.js";
export * from "./ports/audit.js";
export * from "./ports/retention.js";
export * from "./ports/adoption.js";
export * from "./ports/sessions.js";
export * from "./ports/console.js";
export * from "./cancel-rules.js";
export * from "./operator-records.js";
export * from "./database-errors.js";
export * from "./planned-reads.js";
