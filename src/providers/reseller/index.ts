/** The reseller (v1 and v2.0) as a licence provider, over the typed Upstream of src/reseller. */
export { createResellerProvider, resellerCapabilities } from "./provider.js";
export { holdingOf, stateOf } from "./holdings.js";
