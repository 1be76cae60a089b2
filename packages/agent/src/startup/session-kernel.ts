import { requireKernelPython } from "prime-agent-kernel";
import type { Emitter } from "../emitter.js";
import { ExitCode, UserError } from "../errors.js";
import { type KernelServer, ServerKernelRegistry, serverKernelLifecycle } from "../kernel-server/index.js";
import { cellEntry, kernelStateDir, planStateRestore, StateSeal, stateKeyPath } from "../kernel-state/index.js";
import type { Session } from "../session/index.js";
import { cellOutputDir, IPYTHON_TOOL_NAME, type KernelStatus, SessionKernel } from "../tools/index.js";
import type { StartConfig } from "./configuration.js";
import type { SessionPlan } from "./session-plan.js";

const RESUMED_KERNEL_NOTE =
	"[This session continues in a new IPython kernel: variables, imports and functions from earlier cells are gone. Define again what you need.]";

/** The session's kernel (started on first use), and what start-up does with it later. */
export interface KernelParts {
	kernel: SessionKernel;
	/**
	 * For the model, before its next prompt: the kernel is a new one and what it got back of the
	 * variables saved. None when the session never used the kernel.
	 */
	resumeNote?: string;
	/** The kernels this agent home started on a Jupyter Server (to delete those a killed agent left). */
	serverKernels: ServerKernelRegistry;
}

/**
 * Make the session's kernel: in `cwd`, on the configured server or this machine, without the keys,
 * with the variables the picked session's last run saved at the point it continues from (a branch or
 * fork gets its own point's) when this agent home sealed them (loading them runs code). A snapshot
 * that is not loaded is said in `notices`.
 */
export function createSessionKernel(parts: {
	config: StartConfig;
	plan: SessionPlan;
	session: Session;
	resumed: boolean;
	cwd: string;
	/** The checked interpreter; none for a kernel on a server or when the check was skipped. */
	python: string | undefined;
	depth: number;
	status: Emitter<KernelStatus>;
	notices: string[];
}): KernelParts {
	const { config, plan, session } = parts;
	const { paths, kernelServer: server } = config;
	const seal = new StateSeal(stateKeyPath(paths.root));
	const statePlan =
		plan.kind === "new"
			? {}
			: planStateRestore({
					sessionFile: plan.picked.path,
					sessionId: plan.picked.id,
					sessionsDir: paths.sessions,
					seal,
					branch: session.branch(),
					branched: plan.at !== undefined && plan.at !== plan.pickedLeaf,
				});
	if (statePlan.refused) parts.notices.push(statePlan.refused);
	const serverKernels = new ServerKernelRegistry(paths.root);
	const kernel = new SessionKernel({
		cwd: parts.cwd,
		python: parts.python,
		jupyterServer: server?.options,
		lifecycle: server && serverKernelLifecycle(serverKernels, server, () => session.id),
		baseEnv: config.childEnv,
		// The kernel's own depth check fails fast; the host's (ChildManager) decides.
		env: { RLM_DEPTH: String(parts.depth), RLM_MAX_DEPTH: String(config.maxDepth) },
		outputDir: cellOutputDir(session.artifactDir),
		state: {
			dir: kernelStateDir(session.artifactDir),
			restoreFrom: statePlan.restoreFrom,
			seal,
			entryOf: (cellId) => cellEntry(session, cellId),
		},
		onStatus: (status) => parts.status.emit(status),
	});
	const resumeNote = parts.resumed && usedIpython(session) ? (statePlan.note ?? RESUMED_KERNEL_NOTE) : undefined;
	return { kernel, resumeNote, serverKernels };
}

/**
 * Probe the kernel interpreter (one Python start-up) while the rest starts; the result is awaited
 * before anything is written. None for a kernel on a server, or with `skip`.
 */
export function checkKernelInterpreter(
	env: NodeJS.ProcessEnv,
	server: KernelServer | undefined,
	skip: boolean | undefined,
): Promise<string> | undefined {
	if (skip || server) return undefined;
	const check = checkKernelPython(env);
	// Awaited later; a failure before then is not an unhandled rejection.
	check.catch(() => {});
	return check;
}

/**
 * The kernel interpreter, checked to exist and to have the modules the kernel needs, so a broken one
 * fails the run before any model call instead of reaching the model as a failed cell.
 */
async function checkKernelPython(env: NodeJS.ProcessEnv): Promise<string> {
	try {
		return await requireKernelPython(env);
	} catch (error) {
		throw new UserError(
			`The Python kernel environment is not ready: ${(error as Error).message}`,
			"Once it is fixed, `prime-agent doctor` checks the kernel for real.",
			ExitCode.kernel,
		);
	}
}

function usedIpython(session: Session): boolean {
	return session
		.branch()
		.some(
			(entry) =>
				entry.type === "message" && entry.message.role === "toolResult" && entry.message.toolName === IPYTHON_TOOL_NAME,
		);
}
