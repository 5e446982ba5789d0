/** CloudLinux CLN's IP licences: the typed client, what its answers hold, and what the provider can do. */
export { createClnClient, DEFAULT_CLN_URL, type ClnClient, type ClnClientOptions, type ClnLicenseInput, type ClnRemoval, type ClnConversion } from "./client.js";
export { clnTimeToIso, type ClnLicense, type ClnServerLicense, type ClnAvailability } from "./answers.js";
export { clnToken, type ClnToken } from "./token.js";
export { CLN_CAPABILITIES } from "./capabilities.js";
export { CLN_TYPES, CLN_TYPE_NUMBERS, canConvert, clnTypeInfo, isClnType, type ClnProduct, type ClnType, type ClnTypeInfo } from "../../vocabulary/cln-types.js";
export { createClnProvider, type ClnProviderOptions } from "./provider.js";
