import type { UnclaimedRule } from "../drift.js";
import { upstreamStatus } from "../listed.js";

/** A licence the reseller holds that no service accounts for (match.ts's unaccounted): cancelled or adopted by a person, never bought. */
export const unknownLocally: UnclaimedRule = {
  kind: "unknown_locally",
  detect: (l) => ({ expected: "absent", actual: upstreamStatus(l) ?? "present" }),
  fixable: () => false,
  fixText: () => "no service accounts for it: cancel it at the reseller, or send service.created for it (the bridge adopts it and buys nothing)",
};
