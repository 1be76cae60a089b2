import { homedir } from "node:os";
import { join } from "node:path";

/** Resolve the agent home from `PRIME_AGENT_DIR` (default `~/.prime/agent`); never creates it. */
export function agentDir(env: NodeJS.ProcessEnv = process.env): string {
	const fromEnv = env.PRIME_AGENT_DIR?.trim();
	return fromEnv ? fromEnv : join(homedir(), ".prime", "agent");
}

/** The approvals of projects' code (written by `trust/store.ts`). */
export const TRUST_FILE = "trusted-projects.json";
/** The secret that seals kernel-state snapshots (made by `kernel-state/seal.ts`). */
export const STATE_KEY_FILE = "kernel-state.key";

export interface AgentPaths {
	root: string;
	settings: string;
	auth: string;
	models: string;
	sessions: string;
	/** The daemon's sockets, token and records (see `daemon/state.ts`). */
	daemon: string;
}

export function agentPaths(root: string = agentDir()): AgentPaths {
	return {
		root,
		settings: join(root, "settings.json"),
		auth: join(root, "auth.json"),
		models: join(root, "models.json"),
		sessions: join(root, "sessions"),
		daemon: join(root, "daemon"),
	};
}
