/** cPanel Manage2: the typed client, the licences in the port's words, and the intent in `external_notes`. */
export {
  createManage2Client,
  MANAGE2_DEFAULT_URL,
  type Manage2Client,
  type Manage2ClientOptions,
  type Manage2Answer,
  type LicenseAddAnswer,
  type LicenseExpireAnswer,
  type LicenseReActivateAnswer,
  type TransferAnswer,
} from "./client.js";
export type { Manage2License, Manage2LicenseStatus, Manage2Named } from "./answers.js";
export { EXPIRE_CODES, EXTERNAL_NOTES_MAX, type ExpireCode } from "./inputs.js";
export { carriesIntent, intentNote, intentTokenIn } from "./intent.js";
export { createManage2Licences, MANAGE2_CAPABILITIES, type Manage2Licences, type Manage2LicencesOptions, type Manage2Sku, type Outcome } from "./licences.js";
export { createManage2Provider, type Manage2ProviderOptions } from "./provider.js";
