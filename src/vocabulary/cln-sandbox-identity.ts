/**
 * What everyone may know of the CLN sandbox without loading it: its built-in accounts and the
 * token of its /_sandbox control routes. Public knowledge, like the reseller sandbox's tokens.
 */

export interface ClnSandboxAccount {
  login: string;
  secretKey: string;
}

/** The account the bridge uses in sandbox mode. */
export const DEFAULT_CLN_SANDBOX_ACCOUNT: ClnSandboxAccount = { login: "sandbox-cln", secretKey: "sandbox-cln-secret-key" };

/** Another CLN customer, who may hold licences on the same IPs. */
export const OTHER_CLN_SANDBOX_ACCOUNT: ClnSandboxAccount = { login: "sandbox-cln-other", secretKey: "sandbox-cln-other-secret-key" };

export const DEFAULT_CLN_SANDBOX_ADMIN_TOKEN = "sandbox-cln-admin-token";
