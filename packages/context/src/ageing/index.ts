/**
 * Ageing: an old observation's view leaves the prompt for a one-line stub naming its archive id,
 * when the tokens it stops sending pay for the cached prefix it breaks. Pure functions: the host
 * keeps which observations are aged (as session entries) and asks the plan before each call.
 */
export {
	type AgeingInput,
	type AgeingItem,
	type AgeingPlan,
	type AgeingReason,
	ageingCandidates,
	estimateRemainingCalls,
	planAgeing,
} from "./plan.js";
export { CACHE_LIFETIME_MS, type CachePrices, type CacheRatios, cacheRatios, PRICE_RATIOS } from "./prices.js";
export {
	AGED_STUB_POLICY,
	type AgedObservation,
	isAgedStub,
	renderAgedStub,
	STUB_COMMAND_MAX,
	STUB_PREFIX,
} from "./stub.js";
