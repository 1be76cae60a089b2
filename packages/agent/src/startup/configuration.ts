import { join } from "node:path";
import { type AutonomousConfig, resolveAutonomousConfig } from "../autonomous/index.js";
import { childEnvironment } from "../child-env/index.js";
import { resolveMaxDepth } from "../children/index.js";
import { type CompactionSettings, compactionSettingsFrom } from "../compaction/index.js";
import type { GoalBudget } from "../goals/index.js";
import {
	type AgentPaths,
	agentDir,
	agentPaths,
	kernelEnvKeep,
	loadSettings,
	removeLeftoverTempFiles,
	type Settings,
	secureHomeFolders,
} from "../home/index.js";
import { chooseKernelServer, type KernelServer } from "../kernel-server/index.js";
import { Credentials, loadModelsFile, ModelRegistry } from "../providers/index.js";
import { rejectRemovedTools } from "../tools/index.js";
import { resolveGoalOption } from "./long-running.js";
import type { StartOptions } from "./start-options.js";
import { requireWritableSessions } from "./writable-home.js";

/**
 * What the agent home and the command line say for one run, read and checked before any session is
 * opened: a problem a user can fix is a `UserError` from `readConfiguration`, and nothing is written
 * but the home's own repairs (its folders' modes, temp files a killed write left).
 */
export interface StartConfig {
	env: NodeJS.ProcessEnv;
	paths: AgentPaths;
	settings: Settings;
	compaction: CompactionSettings;
	/** Deepest level of sub-agents (RLM_MAX_DEPTH, settings.json's `rlm.maxDepth`). */
	maxDepth: number;
	/** `--autonomous`, merged over settings.json; none without the flag. */
	autonomous?: AutonomousConfig;
	/** `--goal`, checked. */
	goal?: { objective: string; budget: GoalBudget };
	registry: ModelRegistry;
	credentials: Credentials;
	/** Where the kernels run: on `server`, or on this machine without one. */
	kernelServer?: KernelServer;
	/**
	 * What processes running code the agent does not control start with (the kernel, gates, skill
	 * checks): `env` without the providers' keys and the Jupyter Server's token.
	 */
	childEnv: Record<string, string>;
}

/** Read and check the configuration; `notices` hears what was repaired on the way. */
export function readConfiguration(options: StartOptions, notices: string[]): StartConfig {
	const env = options.env ?? process.env;
	const paths = agentPaths(agentDir(env));
	// The command line has done this already (and said so); an embedding host hears of a fix as a notice.
	secureHomeFolders(paths, (line) => notices.push(line));
	requireWritableSessions(paths.sessions, paths.root);
	// Temp files of config and harness writes cut short by a kill (their process is gone).
	removeLeftoverTempFiles(paths.root);
	removeLeftoverTempFiles(join(paths.root, "harness"));
	if (options.tools) rejectRemovedTools(options.tools);
	const settings = loadSettings(paths.settings);
	const compaction = compactionSettingsFrom(settings.compaction, paths.settings);
	const maxDepth = resolveMaxDepth(env, settings.rlm?.maxDepth, paths.settings);
	const autonomous = options.autonomous
		? resolveAutonomousConfig(settings.autonomous, options.autonomous, paths.settings)
		: undefined;
	const goal = options.goal ? resolveGoalOption(options.goal) : undefined;
	const registry = options.registry ?? new ModelRegistry(loadModelsFile(paths.models));
	const credentials = Credentials.load(registry.file, paths.auth, env);
	const kernelPlace = chooseKernelServer(options, env, settings, paths.settings);
	const childEnv = childEnvironment(env, {
		models: registry.file,
		keep: kernelEnvKeep(settings),
		withhold: kernelPlace.tokenVariables,
	}).env;
	return {
		env,
		paths,
		settings,
		compaction,
		maxDepth,
		autonomous,
		goal,
		registry,
		credentials,
		kernelServer: kernelPlace.server,
		childEnv,
	};
}
