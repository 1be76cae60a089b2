import type { Usage } from "@mariozechner/pi-ai";
import { SKILLS_EXTENSION_NAME, skillsExtension } from "../builtin/skills/index.js";
import { type ChildEvent, type ChildLaunchSpec, type ParentFamily, wireFamily } from "../children/index.js";
import { COMPACT_REQUEST_TYPE, compactRequestHandler } from "../compaction/index.js";
import { Emitter } from "../emitter.js";
import { AgentSession } from "../orchestrator/index.js";
import { buildSystemPrompt, findContextFiles } from "../prompt/index.js";
import { resolveModelRef } from "../providers/index.js";
import type { Session } from "../session/index.js";
import { createIpythonTool, type KernelStatus } from "../tools/index.js";
import { RunningCallRecord } from "../unfinished-calls/index.js";
import { childHeartbeat } from "./child-heartbeat.js";
import { childRuntime } from "./child-runtime.js";
import { readConfiguration, type StartConfig } from "./configuration.js";
import { reapLeftovers, startServerKernel } from "./kernel-server.js";
import { wireLongRunning } from "./long-running.js";
import { loadSessionExtensions } from "./session-extensions.js";
import { checkKernelInterpreter, createSessionKernel } from "./session-kernel.js";
import { CurrentModel, startModel } from "./session-model.js";
import { type HeldSession, openSession, planSession, startAnnouncement, workingDirectory } from "./session-plan.js";
import { whenSettled } from "./settling.js";
import type { StartOptions } from "./start-options.js";
import type { StartedSession } from "./started-session.js";

export type { StartOptions } from "./start-options.js";

/**
 * Assemble a session from the agent home and the command line: configuration, new or resumed
 * session, model and key, kernel interpreter check, extensions, system prompt, the ipython tool, the
 * family of sub-agents, goals and autonomous mode. Every problem a user can fix is a `UserError`
 * raised before anything is written.
 */
export async function startSession(options: StartOptions): Promise<StartedSession> {
	// The session is this run's alone (see `Session`'s holder) until it is disposed, or start-up fails.
	const held: HeldSession = {};
	try {
		return await assembleSession(options, held);
	} catch (error) {
		held.session?.release();
		throw error;
	}
}

async function assembleSession(options: StartOptions, held: HeldSession): Promise<StartedSession> {
	const notices: string[] = [];
	// Read only, until every check has passed.
	const config = readConfiguration(options, notices);
	const { env, paths, settings, maxDepth } = config;
	const plan = planSession(options, paths, notices, held);
	const chosen = startModel(config, plan, options);
	const currentModel = new CurrentModel(chosen);
	const kernelCheck = checkKernelInterpreter(env, config.kernelServer, options.skipKernelCheck);
	const cwd = workingDirectory(plan, options.cwd, notices);
	const { extensions, harness, trust, toolNames } = await loadSessionExtensions({
		options,
		config,
		cwd,
		model: currentModel,
		notices,
	});
	const python = await kernelCheck;

	// Every check has passed: from here on the session may be written.
	const { session, resumed } = openSession(plan, options, paths, notices, held);
	const depth = options.child?.depth ?? 0;
	const kernelStatus = new Emitter<KernelStatus>();
	const { kernel, resumeNote, serverKernels } = createSessionKernel({
		config,
		plan,
		session,
		resumed,
		cwd,
		python,
		depth,
		status: kernelStatus,
		notices,
	});
	const promptOptions = { cwd, contextFiles: findContextFiles(cwd, paths.root), canSpawn: depth + 1 <= maxDepth };
	const agentSession = new AgentSession(session, {
		model: chosen.model,
		apiKey: chosen.apiKey,
		toolNames,
		systemPrompt: buildSystemPrompt(promptOptions),
		tools: [createIpythonTool(kernel)],
		thinkingLevel: options.thinkingLevel ?? settings.thinkingLevel,
		extensions,
		kernel,
		compaction: config.compaction,
	});
	currentModel.follow(agentSession);
	// What a running cell prints is kept beside the session until its result is in it.
	agentSession.subscribe(new RunningCallRecord(session.artifactDir).onEvent);
	kernel.onHostRequest(COMPACT_REQUEST_TYPE, compactRequestHandler(agentSession));
	// Skills come last: the skill creator drafts with the session's model, which exists from here on.
	if (!(await extensions.load(SKILLS_EXTENSION_NAME, skillsExtension(currentModel, trust)))) {
		const problem = extensions.problems.at(-1);
		notices.push(`Extension ${SKILLS_EXTENSION_NAME} left out: ${problem?.message}`);
	}

	// Progress of sub-agents at every depth, their usage, and what settling waits on.
	const childEvents = new Emitter<ChildEvent>();
	const childUsage = new Emitter<Usage>();
	const settleChanges = new Emitter();
	agentSession.onIdle(() => settleChanges.emit());
	childEvents.on(() => settleChanges.emit());
	const checkModel = (ref: string): string => {
		const found = resolveModelRef(config.registry, config.credentials, ref);
		config.credentials.require(found.provider);
		return `${found.provider}/${found.id}`;
	};
	const { children, mailbox } = wireFamily({
		self: options.child?.name ?? "root",
		depth,
		maxDepth,
		mailbox: options.child?.mailbox,
		parent: options.parentFamily,
		session: {
			sessionFile: session.path,
			artifactDir: session.artifactDir,
			// The cell runs under the latest assistant message; earlier calls' results may follow it.
			leafId: () => spawningEntry(session),
			appendCustom: (customType, data) => session.appendCustom(customType, data),
			deliver: (message) => agentSession.deliverExternal(message),
		},
		model: () => `${agentSession.model.provider}/${agentSession.model.id}`,
		checkModel,
		models: { registry: config.registry, available: (provider) => config.credentials.has(provider) },
		launch: async (spec, parent) => {
			const child = await startSession(childOptions(options, config, cwd, spec, parent, agentSession));
			// Grandchildren's progress, and what their settling waits on, reach the root too.
			child.onChildEvent((event) => childEvents.emit(event));
			child.onSettleChange(() => settleChanges.emit());
			return childRuntime(child);
		},
		resolveSpec: (name) => harness.subagentSpec(name),
		idleEvictMs: childIdleEvictMs(env),
		kernel,
		subscribe: (listener) => agentSession.subscribe(listener),
		events: childEvents,
		usage: childUsage,
	});
	const longRunning = await wireLongRunning(
		{
			session,
			agentSession,
			children,
			kernel,
			extensions,
			cwd,
			env,
			childEnv: config.childEnv,
			agentHome: paths.root,
			onChildUsage: (listener) => childUsage.on(listener),
			onChildEvent: (listener) => childEvents.on(listener),
		},
		{ goal: config.goal, autonomous: config.autonomous, oneShot: options.oneShot },
	);
	if (resumeNote) agentSession.addHostNote("kernel_fresh", resumeNote);
	const heartbeat = options.child ? childHeartbeat(options.child, kernel, agentSession) : undefined;

	await agentSession.announceStart(startAnnouncement(plan, resumed));
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
	if (config.kernelServer) {
		// The kernel starts now (after the extensions added their start-up code): the model is told
		// which machine and folder it works in, and a server that refuses is said before any model call.
		const location = await startServerKernel(kernel, config.kernelServer).catch(async (error) => {
			await dispose().catch(() => undefined);
			throw error;
		});
		agentSession.baseSystemPrompt = buildSystemPrompt({ ...promptOptions, kernel: location });
		await reapLeftovers(serverKernels, config.kernelServer, location, notices);
	}
	return {
		paths,
		session,
		model: chosen.model,
		kernel,
		agentSession,
		extensions,
		resumed,
		notices,
		onKernelStatus: (listener) => kernelStatus.on(listener),
		children,
		mailbox,
		onChildEvent: (listener) => childEvents.on(listener),
		onChildUsage: (listener) => childUsage.on(listener),
		onSettleChange: (listener) => settleChanges.on(listener),
		whenSettled: (signal) =>
			whenSettled(
				{
					busy: () => !agentSession.isIdle() || !children.isIdle(),
					held: () => agentSession.continuationHeld,
					resumeHeld: () => agentSession.resumeHeld(),
					onChange: (listener) => settleChanges.on(listener),
				},
				signal,
			),
		goals: longRunning.goals,
		autonomous: longRunning.autonomous,
		heartbeat,
		checkModel,
		dispose,
	};
}

/** A sub-agent's start: the parent's configuration and place, its own spec, its parent's side of the family. */
function childOptions(
	options: StartOptions,
	config: StartConfig,
	cwd: string,
	spec: ChildLaunchSpec,
	parent: ParentFamily,
	agentSession: AgentSession,
): StartOptions {
	return {
		cwd,
		env: config.env,
		model: spec.model,
		registry: config.registry,
		thinkingLevel: spec.thinkingLevel ?? agentSession.agent.state.thinkingLevel,
		skipKernelCheck: options.skipKernelCheck,
		extensionPaths: options.extensionPaths,
		trustProject: options.trustProject,
		tools: options.tools,
		// A sub-agent's kernel runs where this one's does, unless it asked for a local one.
		kernelServer: spec.kernel === "local" ? "local" : (config.kernelServer ?? "local"),
		child: spec,
		parentFamily: parent,
	};
}

/** How long a finished sub-agent stays in memory: PRIME_AGENT_CHILD_EVICT_MS (tests), else 90 minutes. */
function childIdleEvictMs(env: NodeJS.ProcessEnv): number | undefined {
	const value = Number(env.PRIME_AGENT_CHILD_EVICT_MS);
	return env.PRIME_AGENT_CHILD_EVICT_MS && Number.isFinite(value) && value > 0 ? value : undefined;
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
