import type { ThinkingLevel } from "@mariozechner/pi-agent-core";
import type { AutonomousFlags } from "../autonomous/index.js";
import type { ChildLaunchSpec, ParentFamily } from "../children/index.js";
import type { KernelServer } from "../kernel-server/index.js";
import type { ModelRegistry } from "../providers/index.js";
import type { GoalOption } from "./long-running.js";

export interface StartOptions {
	cwd: string;
	env?: NodeJS.ProcessEnv;
	/** `provider/id`; default: settings, then the first provider with a key. */
	model?: string;
	/** Continue the newest session of `cwd` (a new one if there is none). */
	continueLatest?: boolean;
	/** Resume a session by id, id prefix or file path. */
	resume?: string;
	/** Fork a session (id, prefix or path): continue in a new file holding its branch. */
	fork?: string;
	/** Entry to continue from in the picked session; the next message starts a new branch there. */
	at?: string;
	/** Only these tools (`--tools`): `ipython` and the extensions' tools. */
	tools?: string[];
	/**
	 * Start even when the model's provider has no key, or no provider has one: slash commands that
	 * need no model work (`-p "/pc status"`); a model call then fails with the missing-key error.
	 */
	allowMissingKey?: boolean;
	/**
	 * The session serves one prompt and ends (`-p`, `--mode json`): what a command says waits for
	 * "your next prompt" names the command line that continues the session instead.
	 */
	oneShot?: boolean;
	thinkingLevel?: ThinkingLevel;
	/** Use this registry instead of pi-ai's catalogue plus models.json (embedding hosts, tests). */
	registry?: ModelRegistry;
	/** Skip the check that a kernel interpreter exists (the kernel still starts lazily). */
	skipKernelCheck?: boolean;
	/** Extension modules or package folders for this run only (`-e`), besides the discovered ones. */
	extensionPaths?: string[];
	/** Start a sub-agent's session (set by the parent's child registry, never by a user). */
	child?: ChildLaunchSpec;
	/** A sub-agent's parent: its name, mailbox and children (the sub-agent's siblings). */
	parentFamily?: ParentFamily;
	/** `--goal`: set this goal before the first prompt. */
	goal?: GoalOption;
	/** `--autonomous`: gates and limits over settings.json's `"autonomous"`. */
	autonomous?: AutonomousFlags;
	/**
	 * `--trust-project`: run the project's code (`.prime/mcp.json` servers, `.prime/skills`
	 * packages, `.prime/agent` extensions and packages) without an approval. Without it only what
	 * the user approved runs (see `ProjectTrust`), and the notices say what did not.
	 */
	trustProject?: boolean;
	/** The background daemon's key for this run (set by its worker): a second run of the session is told to attach to it. */
	daemonAgent?: string;
	/**
	 * `--kernel-url`: run the kernels on this Jupyter Server (over `PRIME_AGENT_KERNEL_URL` and
	 * settings.json's `kernel.url`), or `local` for a local kernel whatever those say.
	 */
	kernelUrl?: string;
	/**
	 * Where the kernels run, decided already (a parent passes its own to a sub-agent, or `local` for
	 * `rlm(kernel="local")`); without it `kernelUrl`, the environment and settings decide.
	 */
	kernelServer?: KernelServer | "local";
}
