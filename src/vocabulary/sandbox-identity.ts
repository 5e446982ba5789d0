/**
 * What everyone may know of the reseller sandbox without loading it: its default tokens and its
 * main reseller's account id. The service in sandbox mode, the CLI beside it and the tests use
 * them; a live service loads none of the sandbox's code.
 */

export interface SandboxTokens {
  reseller: string;
  admin: string;
  legacy: string;
}

export const DEFAULT_SANDBOX_TOKENS: SandboxTokens = {
  reseller: "sandbox-reseller-token",
  admin: "sandbox-admin-token",
  legacy: "sandbox-legacy-token",
};

/** The account the sandbox's reseller token belongs to. */
export const MAIN_RESELLER_ID = 1;
