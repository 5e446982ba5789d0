import { PROVIDER_TITLES } from "../../vocabulary/providers.js";
import type { UnclaimedRule } from "../drift.js";
import { upstreamStatus } from "../listed.js";
import { providerOfListed } from "../lists.js";

/** A licence a provider holds that no service accounts for (match.ts's unaccounted): cancelled or adopted by a person, never bought. */
export const unknownLocally: UnclaimedRule = {
  kind: "unknown_locally",
  detect: (l) => ({ expected: "absent", actual: upstreamStatus(l) ?? "present" }),
  fixable: () => false,
  fixText: (l) => {
    const at = PROVIDER_TITLES[providerOfListed(l)];
    return `no service accounts for it: cancel it at ${at}, or send service.created for it (the bridge adopts it and buys nothing)`;
  },
};
