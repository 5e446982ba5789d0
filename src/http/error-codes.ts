/**
 * Stable, machine-readable error codes. Every error answer of the bridge carries one as `code`
 * beside the human `error`, so panel modules and scripts match on codes, not on prose. Codes
 * are never renamed; new ones may be added. The descriptions go into the OpenAPI document.
 */
export const ERROR_CODES = {
  // The request itself.
  unauthorized: "The bearer token (or webhook signature) is missing or wrong.",
  forbidden: "The request comes from an address that is not allowed.",
  not_found: "No such route.",
  bad_request: "The request is malformed (e.g. a header too long).",
  bad_json: "The body is not valid JSON.",
  unsupported_media_type: "The body's Content-Type is not one this route reads.",
  payload_too_large: "The body is larger than 64 KiB.",
  validation: "A parameter is wrong; `errors` names each one.",
  unknown_service: "The bridge does not know this service (or licence key).",
  unknown_job: "The bridge has no job with this id.",
  // Rules of the licence lifecycle (422 unless said otherwise).
  ip_in_use: "Another service of the bridge holds a licence of this type at this IP.",
  ip_unusable: "The IP cannot hold a licence (loopback, private, multicast, reserved, ...).",
  ip_change_limit: "The product's max_ip_changes is used up.",
  service_terminated: "The service is terminated; only ordering it again applies to it.",
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
  // The bridge.
  unavailable: "The bridge cannot take the request now (its database is busy or gone); retry later (503).",
  internal: "An unexpected error in the bridge (500).",
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;
export const ERROR_CODE_NAMES = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];
