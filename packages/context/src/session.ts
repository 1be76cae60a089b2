import { randomBytes } from "node:crypto";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { defaultSessionId, openSessionArchive, resolveContextRoot } from "./archive/index.js";
import type { SessionArchive } from "./archive/types.js";
import { createBroker } from "./broker/index.js";
import { type ConfigProblem, describeProblem, type LoadedConfig, loadConfig } from "./config/index.js";
import { type RecoveryOptions, type RecoveryResponse, runRecovery } from "./recovery/index.js";
import { fileTaskStore, isEmptyTask, renderTask, type TaskStore } from "./task/index.js";
import type { ContextConfig, ObservationBroker, ObservationInput, ObservationResult } from "./types.js";
import { type WorkflowStore, workflowStore } from "./workflow/index.js";

export interface ContextSessionOptions {
	/** Defaults to one session per working directory (`defaultSessionId(cwd)`). */
	sessionId?: string;
	/** Where config files are looked up from and the default session derived; defaults to `process.cwd()`. */
	cwd?: string;
	/** Storage root; defaults to `resolveContextRoot(env)`. */
	root?: string;
	/** Values over the config files (validated like them). */
	config?: Partial<ContextConfig>;
	env?: NodeJS.ProcessEnv;
	/** Where the task snapshot lives; defaults to `task.json` in the session directory. */
	tasks?: TaskStore;
}

export interface DoctorReport {
	/** False when something needs fixing; `lines` say what and how. */
	ok: boolean;
	lines: string[];
}

/** Config, archive, broker, recovery and task snapshot of one session, wired together. */
export interface ContextSession {
	readonly sessionId: string;
	readonly root: string;
	readonly config: ContextConfig;
	readonly configProblems: ConfigProblem[];
	readonly configFiles: LoadedConfig["files"];
	readonly archive: SessionArchive;
	readonly broker: ObservationBroker;
	readonly tasks: TaskStore;
	/** The staged-workflow tracker: the host reports user messages, the goal, provider calls and sub-agent launches. */
	readonly workflow: WorkflowStore;
	/** Hands a final tool result to the broker; the returned `text` is what the model should see. */
	observe(input: ObservationInput): Promise<ObservationResult>;
	/** Runs a recovery action (see `runRecovery`); reported to the broker. */
	recover(args: unknown, options?: RecoveryOptions): Promise<RecoveryResponse>;
	/** The `<prime_context_task>` message for the current snapshot, or null when it is empty. */
	renderTask(options?: { rootRequest?: string | null }): Promise<string | null>;
	/** Removes this session's archive only and clears its pins; says what was removed. */
	cleanup(): Promise<{ dir: string; observations: number; bytes: number }>;
	/** Config problems, whether the storage root is writable, and session facts. */
	doctor(): Promise<DoctorReport>;
}

export async function openContextSession(options: ContextSessionOptions = {}): Promise<ContextSession> {
	const env = options.env ?? process.env;
	const cwd = resolve(options.cwd ?? process.cwd());
	const root = options.root ?? resolveContextRoot(env);
	const sessionId = options.sessionId ?? defaultSessionId(cwd);
	const loaded = await loadConfig({ cwd, env, overrides: options.config });
	// Nothing is created until something is written (the archive and the task store create their
	// directories user-only), so reading a mistyped session leaves no trace.
	const archive = await openSessionArchive({ root, sessionId });
	const broker = await createBroker({ archive, config: loaded.config });
	const tasks = options.tasks ?? fileTaskStore(archive.dir);
	const recoveryContext = {
		sessionId,
		archive,
		tasks,
		config: loaded.config,
		configProblems: loaded.problems,
		broker,
	};

	return {
		sessionId,
		root,
		config: loaded.config,
		configProblems: loaded.problems,
		configFiles: loaded.files,
		archive,
		broker,
		tasks,
		workflow: workflowStore(archive.dir),
		observe: (input) => broker.observe(input),
		recover: (args, recoveryOptions) => runRecovery(recoveryContext, args, recoveryOptions),
		async renderTask(renderOptions) {
			return renderTask(await tasks.load(), renderOptions);
		},
		async cleanup() {
			const observations = (await archive.list()).length;
			const bytes = await archive.diskBytes();
			const snapshot = await tasks.load();
			await archive.cleanup();
			// Pins name removed observations; focus and open items are the task, not the archive.
			const kept = { ...snapshot, pins: [] };
			if (snapshot.pins.length > 0 || !isEmptyTask(kept)) await tasks.update(() => kept);
			return { dir: archive.dir, observations, bytes };
		},
		async doctor() {
			const lines: string[] = [];
			let ok = true;
			lines.push(`session: ${sessionId}`);
			lines.push(`archive: ${archive.dir}`);
			for (const file of loaded.files)
				lines.push(`config (${file.scope}): ${file.path}${file.found ? "" : " (not present)"}`);
			if (loaded.problems.length === 0) lines.push("config: ok");
			for (const problem of loaded.problems) {
				ok = false;
				lines.push(`config problem: ${describeProblem(problem)}`);
			}
			lines.push(
				`effective config: enabled=${loaded.config.enabled} minTextBytes=${loaded.config.minTextBytes} capsuleMaxBytes=${loaded.config.capsuleMaxBytes} readMaxBytes=${loaded.config.readMaxBytes}`,
			);
			const writable = await checkWritable(root);
			if (writable === null) lines.push(`storage root: ${root} (writable)`);
			else {
				ok = false;
				lines.push(
					`storage root: ${root} is not writable (${writable}); set PRIME_CONTEXT_HOME to a writable directory`,
				);
			}
			try {
				const records = await archive.list();
				lines.push(`observations: ${records.length} (${await archive.diskBytes()} bytes on disk)`);
			} catch (error) {
				ok = false;
				lines.push(`observations: cannot be listed (${(error as Error).message})`);
			}
			lines.push(ok ? "doctor: everything looks fine" : "doctor: problems found (see above)");
			return { ok, lines };
		},
	};
}

/** Null when a file can be created under `root`, else why not. Creates `root` if needed. */
async function checkWritable(root: string): Promise<string | null> {
	const probe = join(root, `.doctor-${process.pid}-${randomBytes(4).toString("hex")}`);
	try {
		await mkdir(root, { recursive: true, mode: 0o700 });
		await writeFile(probe, "", { mode: 0o600, flag: "wx" });
		await rm(probe, { force: true });
		return null;
	} catch (error) {
		return (error as Error).message;
	}
}
