import { HARNESS_EXTENSION_NAME, harnessExtension } from "../builtin/harness/index.js";
import { builtinExtensions } from "../builtin/index.js";
import { type ExtensionRunner, loadExtensions } from "../extensions/index.js";
import { HarnessRuntime, harnessSettingsFrom } from "../harness/index.js";
import { IPYTHON_TOOL_NAME, validateToolNames } from "../tools/index.js";
import { type ProjectTrust, projectTrust } from "../trust/index.js";
import type { StartConfig } from "./configuration.js";
import type { CurrentModel } from "./session-model.js";
import type { StartOptions } from "./start-options.js";

/** What the session runs besides the model's kernel: its extensions, the harness they reach, the tools it keeps. */
export interface SessionExtensions {
	extensions: ExtensionRunner;
	/** The continual harness: its stores open with the session; refinements use the session's model. */
	harness: HarnessRuntime;
	/** What of the project's own code may run (approved, or `--trust-project`). */
	trust: ProjectTrust;
	/** `--tools`, checked against the tools the extensions brought; none: every tool. */
	toolNames?: string[];
}

/**
 * Load the built-in extensions, the user's, the project's as approved and `-e`'s. Each problem is
 * a line in `notices` (a warning leaves nothing out); an unknown name in `--tools` is a `UserError`.
 */
export async function loadSessionExtensions(parts: {
	options: StartOptions;
	config: StartConfig;
	cwd: string;
	model: CurrentModel;
	notices: string[];
}): Promise<SessionExtensions> {
	const { options, config, cwd, notices } = parts;
	const { env, paths } = config;
	const harness = new HarnessRuntime({
		agentHome: paths.root,
		depth: options.child?.depth ?? 0,
		model: parts.model.model,
		apiKey: parts.model.apiKey,
		autoRefine: harnessSettingsFrom(config.settings.harness, paths.settings, env).autoRefine,
	});
	// The project's code runs only as approved; a sub-agent says nothing its parent said already.
	const trust = projectTrust({ cwd, agentHome: paths.root, everything: options.trustProject });
	if (!options.child) notices.push(...trust.notices());
	const extensions = await loadExtensions({
		cwd,
		agentHome: paths.root,
		env,
		childEnv: config.childEnv,
		extraPaths: options.extensionPaths,
		builtins: { ...builtinExtensions(trust), [HARNESS_EXTENSION_NAME]: harnessExtension(harness) },
		project: { extensions: trust.allows("extensions"), packages: trust.allows("packages") },
	});
	// A warning leaves nothing out: the extension runs and said what it does without.
	for (const problem of extensions.problems) {
		notices.push(
			problem.phase === "warning"
				? `Extension ${problem.path}: ${problem.message}`
				: `Extension ${problem.path} left out: ${problem.message}`,
		);
	}
	const toolNames = options.tools
		? validateToolNames(options.tools, [IPYTHON_TOOL_NAME, ...extensions.tools.map((tool) => tool.name)])
		: undefined;
	return { extensions, harness, trust, toolNames };
}
