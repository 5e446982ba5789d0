/** The typed reseller API client: v1 (JSON) and v2.0 (legacy query string). */
export { createV1Client, type V1Client, type V1ClientOptions, type RawAnswer, type TermAnswer, type BundleAnswer, type BundleStatusAnswer, type BalanceAnswer } from "./v1.js";
export { createV2Client, type V2Client, type V2ClientOptions, type V2Answer } from "./v2.js";
export {
  ResellerError,
  UnauthorizedError,
  InsufficientBalanceError,
  NotFoundError,
  ValidationError,
  AlreadyExistsError,
  ForbiddenError,
  UpstreamUnavailableError,
  UnexpectedAnswerError,
  errorFromV1Answer,
  errorFromV2Message,
  type ResellerErrorKind,
  type ResellerErrorInit,
  type UnavailableReason,
} from "./errors.js";
export type { ListedLicense, UpstreamLicense, SubReseller } from "./answers.js";
export { createConnectionPool, DEFAULT_MAX_SOCKETS, type ConnectionPool, type ConnectionPoolOptions } from "./connection-pool.js";
export { DEFAULT_MAX_ANSWER_BYTES, DEFAULT_RETRY, DEFAULT_TIMEOUT_MS, type RetryOptions, type UpstreamCallReport, type UpstreamObserver } from "./transport.js";
export * from "../vocabulary/products.js";
