import { existsSync } from "node:fs";
import { join } from "node:path";
import type { ThinkingLevel } from "@mariozechner/pi-agent-core";
import type { Usage } from "@mariozechner/pi-ai";
import { requireKernelPython } from "prime-agent-kernel";
import { type AutonomousFlags, resolveAutonomousConfig } from "../autonomous/index.js";
import { HARNESS_EXTENSION_NAME, harnessExtension } from "../builtin/harness/index.js";
import { builtinExtensions } from "../builtin/index.js";
import { SKILLS_EXTENSION_NAME, skillsExtension } from "../builtin/skills/index.js";
import { childEnvironment } from "../child-env/index.js";
import {
	CHILD_USAGE_ENTRY,
	type ChildEvent,
	type ChildLaunchSpec,
	ChildManager,
	type ChildUsageData,
	resolveMaxDepth,
	rlmHostHandlers,
	SpawnRefused,
} from "../children/index.js";
import { COMPACT_REQUEST_TYPE, compactionSettingsFrom, compactRequestHandler } from "../compaction/index.js";
import { ExitCode, UserError } from "../errors.js";
import { loadExtensions } from "../extensions/index.js";
import { HarnessRuntime, harnessSettingsFrom } from "../harness/index.js";
import {
	agentDir,
	agentPaths,
	kernelEnvKeep,
	loadSettings,
	removeLeftoverTempFiles,
	secureHomeFolders,
} from "../home/index.js";
import {
	chooseKernelServer,
	type KernelServer,
	reapLeftoverKernels,
	ServerKernelRegistry,
	serverKernelLifecycle,
} from "../kernel-server/index.js";
import { cellEntry, kernelStateDir, planStateRestore, StateSeal, stateKeyPath } from "../kernel-state/index.js";
import { AGENT_MESSAGE_TYPE, type Family, Mailbox, messageHostHandlers } from "../messages/index.js";
import { AgentSession } from "../orchestrator/index.js";
import { buildSystemPrompt, findContextFiles } from "../prompt/index.js";
import {
	chooseDefaultModel,
	findCredential,
	loadAuthFile,
	loadModelsFile,
	ModelRegistry,
	requireCredential,
	resolveModelRef,
} from "../providers/index.js";
import { buildSessionContext, latestSession, openSessionRef, Session, unreadText } from "../session/index.js";
import {
	cellOutputDir,
	createIpythonTool,
	IPYTHON_TOOL_NAME,
	type KernelStatus,
	rejectRemovedTools,
	SessionKernel,
	validateToolNames,
} from "../tools/index.js";
import { projectTrust } from "../trust/index.js";
import { answerUnfinishedCalls, RunningCallRecord, removeRunningCall } from "../unfinished-calls/index.js";
import { childHeartbeat } from "./child-heartbeat.js";
import { childRuntime } from "./child-runtime.js";
import { startServerKernel } from "./kernel-server.js";
import { type GoalOption, resolveGoalOption, wireLongRunning } from "./long-running.js";
import { chooseSessionModel } from "./session-model.js";
import type { StartedSession } from "./started-session.js";
import { requireWritableSessions } from "./writable-home.js";

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
	parentFamily?: { name: string; mailbox: Mailbox; children: ChildManager };
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

const RESUMED_KERNEL_NOTE =
	"[This session continues in a new IPython kernel: variables, imports and functions from earlier cells are gone. Define again what you need.]";

/**
 * Assemble a session from the agent home and the command line: configuration, model and key,
 * kernel interpreter check, new or resumed session, system prompt, the ipython tool.
 * Every problem a user can fix is a `UserError` raised before anything runs.
 */
export async function startSession(options: StartOptions): Promise<StartedSession> {
	// The session is this run's alone (see `Session`'s holder) until it is disposed, or start-up fails.
	const held: { session?: Session } = {};
	try {
		return await assembleSession(options, held);
	} catch (error) {
		held.session?.release();
		throw error;
	}
}

async function assembleSession(options: StartOptions, held: { session?: Session }): Promise<StartedSession> {
	const env = options.env ?? process.env;
	const paths = agentPaths(agentDir(env));
	const notices: string[] = [];
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
	const autonomousConfig = options.autonomous
		? resolveAutonomousConfig(settings.autonomous, options.autonomous, paths.settings)
		: undefined;
	const goalOption = options.goal ? resolveGoalOption(options.goal) : undefined;
	const registry = options.registry ?? new ModelRegistry(loadModelsFile(paths.models));
	const auth = loadAuthFile(paths.auth);
	const kernelPlace = chooseKernelServer(options, env, settings, paths.settings);
	// The kernel, gates and skill checks run code the agent does not control: they start without the
	// keys (and the Jupyter Server's token).
	const childEnv = childEnvironment(env, {
		models: registry.file,
		keep: kernelEnvKeep(settings),
		withhold: kernelPlace.tokenVariables,
	}).env;
	const checkModel = (ref: string): string => {
		const found = resolveModelRef(registry, auth, ref, env);
		requireCredential(found.provider, auth, registry.customConfig(found.provider), paths.auth, env);
		return `${found.provider}/${found.id}`;
	};
	// Who runs the session this process picks up or creates: a second run of it is refused, naming this one.
	const holder = { agent: options.child?.name ?? "root", daemonAgent: options.daemonAgent };
	// The session to pick up (read only until every check below has passed; a fork's source only read).
	let picked: Session | undefined;
	if (options.fork) {
		picked = openSessionRef(options.fork, paths.sessions, options.cwd, { upToDamage: true });
		if (picked.damagedLine !== undefined) {
			const unread = unreadText(picked.unreadLines);
			notices.push(
				`Session ${picked.id} is damaged at line ${picked.damagedLine}; the fork holds the entries before that line.${unread ? ` ${unread}: repair line ${picked.damagedLine} of ${picked.path} by hand to keep ${picked.unreadLines?.count === 1 ? "it" : "them"}.` : ""}`,
			);
		}
	} else if (options.resume) {
		picked = held.session = openSessionRef(options.resume, paths.sessions, options.cwd, { holder });
	}
	// A passive sub-agent brought back by a message continues its own file.
	else if (options.child?.resumeFile) picked = held.session = Session.open(options.child.resumeFile, { holder });
	else if (options.continueLatest) {
		const latest = latestSession(paths.sessions, options.cwd);
		if (latest) picked = held.session = Session.open(latest.path, { holder });
		else notices.push("No earlier session in this directory; starting a new one.");
	}
	// What reading the file decided (entries placed in file order, a compaction's kept part): said, never silent.
	if (picked) notices.push(...picked.readNotes);
	if (picked?.linearBackup) {
		notices.push(
			options.fork
				? `The fork is written as a tree; ${picked.path} is left as it is.`
				: `When this session continues, its file is rewritten as a tree; the original is kept as ${picked.linearBackup}.`,
		);
	}
	if (picked && options.at && !picked.entry(options.at)) {
		throw new UserError(
			`No entry ${options.at} in session ${picked.id}.`,
			`List the entries with \`prime-agent sessions ${picked.id}\`.`,
			ExitCode.usage,
		);
	}

	// A picked-up session keeps its model unless --model says otherwise.
	const recorded = picked ? buildSessionContext(picked.branch(options.at ?? picked.leafId)).model : undefined;
	const recordedModel = recorded ? registry.find(recorded.provider, recorded.modelId) : undefined;
	const { model, apiKey } = chooseSessionModel(
		registry,
		() =>
			options.model
				? resolveModelRef(registry, auth, options.model, env)
				: (recordedModel ?? chooseDefaultModel(registry, auth, settings.defaultModel, env)),
		(chosen) => requireCredential(chosen.provider, auth, registry.customConfig(chosen.provider), paths.auth, env).key,
		options.allowMissingKey === true,
	);
	// The interpreter is probed (one Python start-up) while the extensions load; awaited before anything is written.
	// A kernel on a server needs no interpreter here.
	const kernelCheck = options.skipKernelCheck || kernelPlace.server ? undefined : checkKernelPython(env);
	kernelCheck?.catch(() => {});

	const pickedLeaf = picked?.leafId ?? null;
	const sessionCwd = picked?.cwd ?? options.cwd;
	const cwd = existsSync(sessionCwd) ? sessionCwd : options.cwd;
	if (cwd !== options.cwd) notices.push(`Working in the session's directory: ${cwd}`);
	else if (sessionCwd !== options.cwd) {
		notices.push(
			`The session's directory ${sessionCwd} no longer exists: working in ${cwd} instead. Files the conversation names there are not here; restore the directory and resume again to work in it.`,
		);
	}
	// The continual harness: its stores open with the session; refinements use the session's model.
	const harness = new HarnessRuntime({
		agentHome: paths.root,
		depth: options.child?.depth ?? 0,
		model: () => agentSession.model,
		apiKey: () => (typeof apiKey === "string" ? apiKey : apiKey()),
		autoRefine: harnessSettingsFrom(settings.harness, paths.settings, env).autoRefine,
	});
	// The project's code runs only as approved; a sub-agent says nothing its parent said already.
	const trust = projectTrust({ cwd, agentHome: paths.root, everything: options.trustProject });
	if (!options.child) notices.push(...trust.notices());
	const extensions = await loadExtensions({
		cwd,
		agentHome: paths.root,
		env,
		childEnv,
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
	const python = await kernelCheck;

	// Every check has passed: from here on the session may be written.
	let session: Session;
	if (picked && options.fork) {
		session = held.session = picked.fork(options.at ?? picked.leafId, { holder });
		notices.push(`Forked session ${picked.id} into ${session.id}.`);
	} else if (picked) {
		session = picked;
		if (options.at) session.branchFrom(options.at);
	} else if (options.child) {
		const child = options.child;
		session = held.session = Session.create({
			dir: child.sessionDir,
			cwd: options.cwd,
			parentSession: child.parentSessionFile,
			parentEntryId: child.parentEntryId,
			rlmChild: { id: child.id, name: child.name, depth: child.depth },
			holder,
		});
	} else {
		session = held.session = Session.create({ dir: paths.sessions, cwd: options.cwd, holder });
	}
	// The process that ran it last stopped during a call (killed, crashed): the call gets its result now.
	if (picked && answerUnfinishedCalls(session, picked.artifactDir) > 0) {
		if (!options.fork) removeRunningCall(picked.artifactDir);
		notices.push(
			"The last run of this session stopped before a cell's result was saved (its process crashed or was killed): the model is told, with the output recorded until then.",
		);
	}
	const resumed = session.persisted;
	// A picked-up session (a fork too: from its parent's folder) gets the variables saved by its last run,
	// when this agent home saved them there (loading them runs code).
	const seal = new StateSeal(stateKeyPath(paths.root));
	// The state of the point the session continues from: a branch or fork gets its own point's.
	const statePlan = picked
		? planStateRestore({
				sessionFile: picked.path,
				sessionId: picked.id,
				sessionsDir: paths.sessions,
				seal,
				branch: session.branch(),
				branched: options.at !== undefined && options.at !== pickedLeaf,
			})
		: {};
	if (statePlan.refused) notices.push(statePlan.refused);
	const statusListeners = new Set<(status: KernelStatus) => void>();
	const depth = options.child?.depth ?? 0;
	const selfName = options.child?.name ?? "root";
	const server = kernelPlace.server;
	const serverKernels = new ServerKernelRegistry(paths.root);
	const kernel = new SessionKernel({
		cwd,
		python,
		jupyterServer: server?.options,
		lifecycle: server && serverKernelLifecycle(serverKernels, server, () => session.id),
		baseEnv: childEnv,
		// The kernel's own depth check fails fast; the host's (ChildManager) decides.
		env: { RLM_DEPTH: String(depth), RLM_MAX_DEPTH: String(maxDepth) },
		outputDir: cellOutputDir(session.artifactDir),
		state: {
			dir: kernelStateDir(session.artifactDir),
			restoreFrom: statePlan.restoreFrom,
			seal,
			entryOf: (cellId) => cellEntry(session, cellId),
		},
		onStatus: (status) => {
			for (const listener of statusListeners) listener(status);
		},
	});
	const promptOptions = { cwd, contextFiles: findContextFiles(cwd, paths.root), canSpawn: depth + 1 <= maxDepth };
	const agentSession = new AgentSession(session, {
		model,
		apiKey,
		toolNames,
		systemPrompt: buildSystemPrompt(promptOptions),
		tools: [createIpythonTool(kernel)],
		thinkingLevel: options.thinkingLevel ?? settings.thinkingLevel,
		extensions,
		kernel,
		compaction,
	});
	// What a running cell prints is kept beside the session until its result is in it.
	agentSession.subscribe(new RunningCallRecord(session.artifactDir).onEvent);
	kernel.onHostRequest(COMPACT_REQUEST_TYPE, compactRequestHandler(agentSession));
	// Skills come last: the skill creator drafts with the session's model, which exists from here on.
	const sessionModel = {
		model: () => agentSession.model,
		apiKey: () => (typeof apiKey === "string" ? apiKey : apiKey()),
	};
	if (!(await extensions.load(SKILLS_EXTENSION_NAME, skillsExtension(sessionModel, trust)))) {
		const problem = extensions.problems.at(-1);
		notices.push(`Extension ${SKILLS_EXTENSION_NAME} left out: ${problem?.message}`);
	}
	const childListeners = new Set<(event: ChildEvent) => void>();
	const childUsageListeners = new Set<(usage: Usage) => void>();
	const children = new ChildManager({
		parent: {
			sessionFile: session.path,
			artifactDir: session.artifactDir,
			// The cell runs under the latest assistant message; earlier calls' results may follow it.
			leafId: () => spawningEntry(session),
			appendCustom: (customType, data) => {
				session.appendCustom(customType, data);
				// A child's usage is part of this session's, as its own parent sees it.
				if (customType === CHILD_USAGE_ENTRY)
					for (const listener of childUsageListeners) listener((data as ChildUsageData).usage);
			},
			deliver: (message) => agentSession.deliverExternal(message),
		},
		depth,
		maxDepth,
		parentModel: () => `${agentSession.model.provider}/${agentSession.model.id}`,
		checkModel: (ref) => {
			try {
				return checkModel(ref);
			} catch (error) {
				if (!(error instanceof UserError)) throw error;
				throw new SpawnRefused(
					`rlm(model=${JSON.stringify(ref)}): ${error.message} No other model is used in its place; pick an available one from await rlm.find_models("query").`,
				);
			}
		},
		launch: async (spec) => {
			const child = await startSession({
				cwd,
				env,
				model: spec.model,
				registry,
				thinkingLevel: spec.thinkingLevel ?? agentSession.agent.state.thinkingLevel,
				skipKernelCheck: options.skipKernelCheck,
				extensionPaths: options.extensionPaths,
				trustProject: options.trustProject,
				tools: options.tools,
				// A sub-agent's kernel runs where this one's does, unless it asked for a local one.
				kernelServer: spec.kernel === "local" ? "local" : (server ?? "local"),
				child: spec,
				parentFamily: { name: selfName, mailbox, children },
			});
			// Grandchildren's progress reaches the root's listeners too.
			child.onChildEvent((event) => {
				for (const listener of childListeners) listener(event);
			});
			return childRuntime(child);
		},
		onEvent: (event) => {
			for (const listener of childListeners) listener(event);
		},
		resolveSpec: (name) => harness.subagentSpec(name),
		idleEvictMs: childIdleEvictMs(env),
	});
	const rlmHandlers = rlmHostHandlers(children, {
		registry,
		available: (provider) => findCredential(provider, auth, registry.customConfig(provider), env) !== undefined,
	});
	for (const [type, handler] of Object.entries(rlmHandlers)) kernel.onHostRequest(type, handler);
	// A child's mailbox was made at its admission (messages sent while it started wait in it).
	const mailbox = options.child?.mailbox ?? new Mailbox(selfName);
	mailbox.attach((message) => agentSession.deliverExternal(message));
	agentSession.subscribe((event) => {
		if (event.type !== "message_end" || event.message.role !== "host") return;
		const details = event.message.details as { id?: unknown } | undefined;
		if (event.message.customType === AGENT_MESSAGE_TYPE && typeof details?.id === "string")
			mailbox.delivered(details.id);
	});
	const parentFamily = options.parentFamily;
	const family: Family = {
		self: selfName,
		parent: parentFamily && {
			name: parentFamily.name,
			mailbox: parentFamily.mailbox,
			noteReply: () => parentFamily.children.noteReply(selfName),
		},
		child: (name) => children.receiver(name),
		childNames: () => children.names(),
		sibling: (name) => parentFamily?.children.receiver(name),
		siblingNames: () => parentFamily?.children.names().filter((name) => name !== selfName) ?? [],
	};
	for (const [type, handler] of Object.entries(messageHostHandlers(mailbox, family)))
		kernel.onHostRequest(type, handler);
	const longRunning = await wireLongRunning(
		{
			session,
			agentSession,
			children,
			kernel,
			extensions,
			cwd,
			env,
			childEnv,
			agentHome: paths.root,
			onChildUsage: (listener) => childUsageListeners.add(listener),
			onChildEvent: (listener) => childListeners.add(listener),
		},
		{ goal: goalOption, autonomous: autonomousConfig, oneShot: options.oneShot },
	);
	if (resumed && usedIpython(session)) agentSession.addHostNote("kernel_fresh", statePlan.note ?? RESUMED_KERNEL_NOTE);
	const heartbeat = options.child ? childHeartbeat(options.child, kernel, agentSession) : undefined;

	await agentSession.announceStart({
		reason: picked && options.fork ? "fork" : resumed ? "resume" : "new",
		forkedFrom:
			picked && options.fork ? { sessionFile: picked.path, atEntryId: options.at ?? picked.leafId } : undefined,
		branchedFrom:
			picked && !options.fork && options.at ? { leafId: options.at, previousLeafId: pickedLeaf } : undefined,
	});
	const dispose = async () => {
		try {
			heartbeat?.stop();
			longRunning.autonomous?.dispose();
			await children.shutdown();
			await agentSession.shutdown();
			await kernel.dispose();
		} finally {
			// After the kernel saved its variables: the next run of the session finds them.
			session.release();
		}
	};
	if (server) {
		// The kernel starts now (after the extensions added their start-up code): the model is told
		// which machine and folder it works in, and a server that refuses is said before any model call.
		const location = await startServerKernel(kernel, server).catch(async (error) => {
			await dispose().catch(() => undefined);
			throw error;
		});
		agentSession.baseSystemPrompt = buildSystemPrompt({ ...promptOptions, kernel: location });
		// What agents of this home killed outright left there goes now (the server answered just now).
		const reaped = await reapLeftoverKernels(serverKernels, server).catch(() => 0);
		if (reaped > 0)
			notices.push(
				`Deleted ${reaped} kernel${reaped === 1 ? "" : "s"} an earlier agent of this home left on ${location.kind === "jupyter-server" ? location.url : server.options.url}.`,
			);
	}
	return {
		paths,
		session,
		model,
		kernel,
		agentSession,
		extensions,
		resumed,
		notices,
		onKernelStatus(listener) {
			statusListeners.add(listener);
			return () => statusListeners.delete(listener);
		},
		children,
		mailbox,
		onChildEvent(listener) {
			childListeners.add(listener);
			return () => childListeners.delete(listener);
		},
		onChildUsage(listener) {
			childUsageListeners.add(listener);
			return () => childUsageListeners.delete(listener);
		},
		async whenSettled(signal) {
			while (!signal?.aborted) {
				if (!agentSession.isIdle() || !children.isIdle()) {
					await agentSession.whenIdle();
					await new Promise((resolve) => setTimeout(resolve, 25));
				} else if (agentSession.continuationHeld) await agentSession.resumeHeld();
				else break;
			}
		},
		goals: longRunning.goals,
		autonomous: longRunning.autonomous,
		heartbeat,
		checkModel,
		dispose,
	};
}

/** How long a finished sub-agent stays in memory: PRIME_AGENT_CHILD_EVICT_MS (tests), else 90 minutes. */
function childIdleEvictMs(env: NodeJS.ProcessEnv): number | undefined {
	const value = Number(env.PRIME_AGENT_CHILD_EVICT_MS);
	return env.PRIME_AGENT_CHILD_EVICT_MS && Number.isFinite(value) && value > 0 ? value : undefined;
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

/** The assistant message whose tool call is running: the last one on the active branch. */
function spawningEntry(session: Session): string | null {
	let id = session.leafId;
	while (id) {
		const entry = session.entry(id);
		if (!entry) break;
		if (entry.type === "message" && entry.message.role === "assistant") return entry.id;
		id = entry.parentId;
	}
	return session.leafId;
}
