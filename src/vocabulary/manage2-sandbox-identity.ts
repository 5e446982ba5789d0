/**
 * What everyone may know of the Manage2 sandbox without loading it: its default credentials
 * and default group, for the service in sandbox mode, the CLI beside it and the tests (a live
 * service loads none of the sandbox's code).
 */

export interface Manage2Credentials {
  /** A Manage2 user is the partner's e-mail address. */
  user: string;
  password: string;
}

export const DEFAULT_MANAGE2_SANDBOX_CREDENTIALS: Manage2Credentials = {
  user: "sandbox@manage2.invalid",
  password: "sandbox-manage2-password",
};

/** The sandbox account's default group (the contract's catalogue example names 678). */
export const MANAGE2_SANDBOX_DEFAULT_GROUP_ID = 678;
