/**
 * Project trust: code a repository brings (`.prime/mcp.json` servers, `.prime/skills` packages,
 * `.prime/agent/extensions`, the extension packages of `.prime/agent/settings.json`) runs only
 * once the user approved it, bound to its content hash, or with `--trust-project`. Approvals live
 * in the agent home's `trusted-projects.json`, keyed by the project's real path.
 */
export { hashFile, hashTree } from "./content-hash.js";
export {
	currentHash,
	findProjectCode,
	PROJECT_SKILLS,
	type ProjectCode,
	type ProjectCodeItem,
	type ProjectCodeKind,
} from "./project-code.js";
export { HOW_TO_APPROVE, type ProjectTrust, projectTrust } from "./project-trust.js";
export {
	type Approval,
	approveItems,
	approveOwnSkills,
	readApprovals,
	TRUST_FILE,
	trustStorePath,
} from "./store.js";
