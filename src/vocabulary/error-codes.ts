/**
 * Stable, machine-readable error codes. Every error answer of the bridge carries one as `code`
 * beside the human `error`, so panel modules and scripts match on codes, not on prose. Codes
 * are never renamed; new ones may be added. The descriptions go into the OpenAPI document.
 */
export const ERROR_CODES = {
  // The request itself.
  unauthorized: "The bearer token (or webhook signature) is missing or wrong.",
  too_many_failures: "Too many wrong tokens (admin API bearer tokens and console logins together) from this client address: refused, the right token too, for `retry_after_seconds` (also the Retry-After header) (429).",
  forbidden: "The request comes from an address that is not allowed, or the operator's role does not allow the action (`required_role` names the role it needs).",
  not_found: "No such route.",
  provisioning_off: "The provisioning API is off: PROVISIONING_TOKEN is not set on the bridge (404).",
  bad_request: "The request is malformed (e.g. a header too long).",
  bad_json: "The body is not valid JSON.",
  unsupported_media_type: "The body's Content-Type is not one this route reads.",
  payload_too_large: "The body is larger than the route takes (64 KiB for webhooks and most of the API); the error names the limit.",
  validation: "A parameter is wrong; `errors` names each one.",
  unknown_service: "The bridge does not know this service (or licence key).",
  unknown_job: "The bridge has no job with this id.",
  // Rules of the licence lifecycle (422 unless said otherwise).
  ip_in_use: "Another service of the bridge holds a licence of this type at this IP (at the intake), or holds the licence the provider has there by its own licence id (a job blocked: a suspended Manage2 service that moved keeps its expired licence at the IP it left).",
  ip_unusable: "The IP cannot hold a licence (loopback, private, multicast, reserved, ...).",
  ip_change_limit: "The product's max_ip_changes is used up.",
  service_terminated: "The service is terminated; only ordering it again applies to it.",
  service_not_active: "The action needs an active licence, and the service is not active (e.g. resending the install mail of one still pending).",
  no_customer_email: "The service has no customer e-mail address to send to.",
  retry_later: "Not stored now, but the same request sent again later will be (409).",
  conflict: "The request conflicts with the state of the bridge (409), e.g. a job that cannot be retried.",
  // The work, once accepted (provisioning API 502, or a job's outcome).
  insufficient_balance: "The reseller refused for lack of balance; top it up, then retry.",
  upstream_unauthorized: "The reseller rejected the bridge's API token.",
  upstream_refused: "The reseller refused the request (its validation, or a forbidden operation).",
  upstream_not_found: "The reseller does not have the licence the operation is about.",
  upstream_unavailable: "The reseller could not be reached, or answered with an error, until the retries ran out.",
  needs_operator: "The outcome cannot be known automatically; an operator must check (see the error).",
  job_failed: "The work failed for good; the error says why.",
  pending: "The work is accepted and still running (a call made with on_pending=error, 503 with Retry-After); the same call made again later answers with its outcome.",
  // The bridge.
  unavailable: "The bridge cannot take the request now (its database is busy or gone); retry later (503).",
  internal: "An unexpected error in the bridge (500).",
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;
export const ERROR_CODE_NAMES = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];

/**
 * What a panel's staff should do about a code, for the panel modules' error messages: the PHP
 * modules' copy (integrations/shared/LicenseBridgeMessages.php) is generated from this map by
 * `npm run integrations:sync`, so a module's advice cannot drift from the bridge. `{action}` is
 * the panel's name for the call (Create, Renew, Change IP...). Codes without a hint need none
 * beyond the error itself.
 */
export const ERROR_HINTS: Partial<Record<ErrorCode, string>> = {
  unauthorized: "The bridge refused the token: enter its PROVISIONING_TOKEN in the module's server settings.",
  forbidden: "The bridge refused this panel's address: check its allow-list.",
  validation: "Correct the value named above, then run {action} again.",
  unknown_service: "The bridge has no licence for this service: run Create first.",
  provisioning_off: "The bridge's provisioning API is off: set PROVISIONING_TOKEN on the bridge, enter the same token here, then test the connection again.",
  ip_in_use: "Another service already holds this licence at that IP: one licence belongs to one service.",
  ip_unusable: "Use a public IP address for the licence.",
  ip_change_limit: "The product allows no more IP changes for this licence.",
  service_terminated: "The service is terminated at the bridge: only Create (ordering it again) applies to it.",
  retry_later: "Run {action} again in a minute.",
  pending: "The bridge is still working on it: run {action} again in a minute; running it again is safe and never buys anything twice.",
  insufficient_balance: "The reseller account needs balance: top it up, then run {action} again; nothing is bought twice.",
  upstream_unauthorized: "The reseller refused the bridge's API token: fix RESELLER_API_TOKEN on the bridge, then run {action} again.",
  upstream_refused: "The reseller refused the request: see the error, correct it, then run {action} again.",
  upstream_not_found: "The reseller has no such licence: run the bridge's reconcile to see the difference.",
  upstream_unavailable: "The reseller could not be reached: run {action} again later; nothing is bought twice.",
  needs_operator: "The bridge cannot tell the outcome by itself: check the licence in the reseller's panel, then retry the job in the bridge.",
  unavailable: "The bridge is busy or restarting: run {action} again in a minute.",
};
