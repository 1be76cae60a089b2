/**
 * Prime Context inside Prime Agent, written only against the public extension API (as any
 * third-party extension would be): every final tool result goes through the observation broker
 * and the transcript stores what it decided; the `prime_context` tool and kernel module recover
 * archived output; `/pc` commands; the task snapshot before each provider call.
 */
import { existsSync, rmdirSync } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { AgentMessage } from "@mariozechner/pi-agent-core";
import {
	ArchiveError,
	BROKER_STATE_FILE,
	type ContextSession,
	continueNumbering,
	copyObservations,
	fileTaskStore,
	lastSequence,
	loadConfig,
	openContextSession,
	openSessionArchive,
	PC_HINTS,
	type RecoveryContext,
	type RecoveryOptions,
	type RecoveryResponse,
	runRecovery,
	SEQUENCE_FLOOR_FILE,
	type WorkflowState,
	workflowSection,
	workflowStore,
} from "prime-agent-context";
import type { ExtensionAPI, HostMessage, SessionEntry } from "../../extensions/api.js";
import {
	AGEING_ENTRY_TYPE,
	type AgeingOptions,
	agedOn,
	ageingRecords,
	applyAgeing,
	cacheIsCold,
	planFor,
	removedSinceLastAnswer,
	withArchivedAs,
} from "./ageing.js";
import { childSessionId } from "./child-archive.js";
import { runPcCommand } from "./commands.js";
import { coalesceGoalContinuations, shortenKernelNotices, taskMessage, taskText } from "./context-view.js";
import { archiveWithParent } from "./fork-archive.js";
import { ECONOMIC_POLICY } from "./policy.js";
import { createPrimeContextTool, PRIME_CONTEXT_TOOL_NAME } from "./tool.js";
import { workflowSyncOf } from "./workflow-sync.js";

export const PRIME_CONTEXT_EXTENSION_NAME = "builtin:prime-context";
/** Host request type answered for the kernel's `prime_context` module. */
export const PRIME_CONTEXT_REQUEST_TYPE = "prime_context";
/** `prime_context.text(id)` refuses observations larger than this (read or search them instead). */
export const TEXT_MAX_BYTES = 64 * 1024 * 1024;

/** The kernel module `prime_context` (`python-builtin/prime_context.py`): defined in every kernel, and importable. */
const KERNEL_MODULE = "prime_context";
const KERNEL_PYTHON_DIR = fileURLToPath(new URL("../../../python-builtin", import.meta.url));

export default async function primeContextExtension(api: ExtensionAPI): Promise<void> {
	// The config file decides whether the model gets the tool and the policy; `/pc mode` later
	// switches the broker and the task snapshot only (the tool list is fixed when a session starts).
	const startConfig = (await loadConfig({ cwd: api.cwd, env: contextEnv(api) })).config;
	let opened: Promise<ContextSession> | undefined;
	let recoveryContext: Promise<RecoveryContext> | undefined;
	/** `/pc mode`: lasts for this session; undefined follows the config file. */
	let mode: boolean | undefined;
	let enabledByConfig = startConfig.enabled;
	/** The last task message sent, reused while its text is unchanged (byte-identical requests). */
	let lastTask: HostMessage | undefined;
	let sessionFile: string | undefined;

	const context = (): Promise<ContextSession> => {
		if (!opened) throw new Error("Prime Context starts with the session; try again once it has started.");
		return opened;
	};
	const active = () => mode ?? enabledByConfig;
	const recover = async (args: Record<string, unknown>, options: RecoveryOptions = {}): Promise<RecoveryResponse> => {
		const base = await (recoveryContext ?? context().then(ownRecoveryContext));
		const { child, ...rest } = args;
		if (child === undefined || child === null || child === "") return runRecovery(base, rest, options);
		if (!["list", "read", "search"].includes(String(rest.action))) {
			return refusal(`child= works with list, read and search (and prime_context.text), not ${String(rest.action)}.`);
		}
		const found = await childContext(base, child);
		return "error" in found ? refusal(found.error) : runRecovery(found, rest, options);
	};

	/** A sub-agent's archive, read from this session (`child="name"`); its own broker is not touched. */
	async function childContext(base: RecoveryContext, child: unknown): Promise<RecoveryContext | { error: string }> {
		const name = String(child);
		const id = sessionFile ? await childSessionId(sessionFile, base.sessionId, name) : undefined;
		if (!id) {
			return {
				error: `No sub-agent named "${name}" with a saved session here (a child's session is saved once it has answered); await rlm.list_subagents() lists them.`,
			};
		}
		const archive = await openSessionArchive({ root: (await context()).root, sessionId: id });
		return { ...base, sessionId: id, archive, broker: null };
	}

	api.addKernelStartup(`import ${KERNEL_MODULE}\n`, { pythonPath: [KERNEL_PYTHON_DIR], names: [KERNEL_MODULE] });

	api.on("session_start", async (event) => {
		sessionFile = event.sessionFile;
		opened = openContextSession({ sessionId: event.sessionId, cwd: api.cwd, env: contextEnv(api) });
		const session = await opened;
		enabledByConfig = session.config.enabled;
		recoveryContext = Promise.resolve(ownRecoveryContext(session));
	});

	// A fork copies its parent's snapshot and pinned observations; other parent ids are read through the parent.
	api.on("session_fork", async (event) => {
		const session = await context();
		const parentId = await sessionIdOf(event.fromSessionFile);
		if (!parentId) {
			api.warn(
				`Prime Context: cannot read the parent session ${event.fromSessionFile}; its observations stay in its own archive.`,
			);
			return;
		}
		const parent = await openSessionArchive({ root: session.root, sessionId: parentId });
		// The fork's own ids start after every id of its parent (and of the parent's parents).
		try {
			continueNumbering(session.archive.dir, lastSequence(parent.dir));
		} catch (error) {
			api.warn(
				`Prime Context: the fork's observation ids may repeat its parent's (${(error as Error).message}); read older outputs in the parent session.`,
			);
		}
		const snapshot = await fileTaskStore(parent.dir).load();
		await copyObservations(parent, session.archive, snapshot.pins).catch((error: Error) => {
			api.warn(`Prime Context: pinned observations were not copied into the fork (${error.message}).`);
		});
		await session.tasks.update(() => snapshot);
		// The fork goes on with its parent's workflow: a lock stays a lock, and passing runs stay counted.
		await session.workflow.adopt(await workflowStore(parent.dir).load()).catch((error: Error) => {
			api.warn(`Prime Context: the parent's workflow state was not carried into the fork (${error.message}).`);
		});
		recoveryContext = Promise.resolve({
			...ownRecoveryContext(session),
			archive: archiveWithParent(session.archive, parent),
		});
	});

	// A session that ended before any answer leaves no file; its archive folder goes too while empty.
	api.on("session_shutdown", async () => {
		if (!opened || !sessionFile || existsSync(sessionFile)) return;
		const session = await opened;
		// The workflow counted a provider call that never answered; with nothing archived that is all the state holds.
		if ((await session.archive.list()).length === 0) {
			await rm(join(session.archive.dir, BROKER_STATE_FILE), { force: true });
			await rm(join(session.archive.dir, SEQUENCE_FLOOR_FILE), { force: true });
		}
		removeEmptyFolders([session.archive.dir, dirname(session.archive.dir), session.root]);
	});

	api.on("before_agent_start", () => (active() ? { systemPromptAppend: ECONOMIC_POLICY } : undefined));

	api.on("tool_result", async (event) => {
		// Recovery answers are never archived again; with the mode off results stay as they are.
		if (!active() || !opened || event.toolName === PRIME_CONTEXT_TOOL_NAME) return undefined;
		const text = event.content.map((part) => (part.type === "text" ? part.text : "")).join("");
		const images = event.content.filter((part) => part.type !== "text");
		const code = event.input.code;
		const result = await (await opened).observe({
			tool: event.toolName,
			text,
			// Given only while the text is still the tool's own (an earlier extension did not replace it).
			fullOutputPath: event.fullOutputPath,
			isError: event.isError,
			command: typeof code === "string" ? code : undefined,
			contextUsage: api.getContextUsage().fraction,
		});
		if (!result.archived) {
			api.warn(`Prime Context: output not archived (${result.archiveError ?? "unknown reason"}).`);
			return result.decision === "pass-through"
				? undefined
				: { content: [{ type: "text", text: result.text }, ...images] };
		}
		// The archive id goes with the result, so that ageing can later send it as a stub naming it.
		const details = withArchivedAs(event.details, {
			id: result.id,
			bytes: result.bytes,
			lines: result.lines,
			headline: result.headline,
		});
		if (result.decision === "pass-through") return { details };
		return { content: [{ type: "text", text: result.text }, ...images], details };
	});

	api.on("context", async (event) => {
		if (!active() || !opened) return undefined;
		const session = await opened;
		const branch = api.getBranch();
		const workflow = await syncWorkflow(session, branch);
		const trimmed = ageMessages(session, branch, shortenKernelNotices(coalesceGoalContinuations(event.messages)));
		const section = workflow ? workflowSection(workflow) : null;
		const text = taskText(await session.tasks.load(), branch, trimmed, section);
		if (text === null) return trimmed === event.messages ? undefined : { messages: trimmed };
		if (lastTask?.content !== text) lastTask = taskMessage(text);
		return { messages: [...trimmed, lastTask as AgentMessage] };
	});

	/**
	 * The messages with every aged tool result sent as its stub, after ageing what is due on this
	 * call (recorded as an entry first, so the session can rebuild these bytes).
	 */
	function ageMessages(
		session: ContextSession,
		branch: ReturnType<ExtensionAPI["getBranch"]>,
		messages: AgentMessage[],
	): AgentMessage[] {
		const aged = agedOn(branch);
		let sent = applyAgeing(messages, aged);
		if (session.config.ageing) {
			const { record } = planFor(
				sent,
				aged,
				ageingOptions(session, branch, { cacheCold: cacheIsCold(branch, Date.now()) }),
			);
			if (record) {
				api.appendEntry(AGEING_ENTRY_TYPE, record);
				for (const { id } of record.aged) aged.add(id);
				sent = applyAgeing(messages, aged);
			}
		}
		return sent;
	}

	/** What the plan needs of this session: the model's prices, the window and the calls made so far. */
	function ageingOptions(
		session: ContextSession,
		branch: readonly SessionEntry[],
		moment: { cacheCold: boolean; force?: boolean },
	): AgeingOptions {
		return {
			prices: api.getModel().cost,
			window: session.config.ageingWindow,
			callsSoFar: answersOn(branch),
			...moment,
		};
	}

	// Ageing comes before compaction: a threshold compaction is skipped when ageing every
	// observation that may go brings the context under the threshold.
	api.on("before_compact", async (event) => {
		if (event.reason !== "threshold" || !active() || !opened) return undefined;
		const session = await opened;
		if (!session.config.ageing) return undefined;
		const branch = api.getBranch();
		// Ageing recorded since the newest answer is not in any usage the provider reported yet.
		const before = event.preparation.tokensBefore - removedSinceLastAnswer(branch);
		const skip = (removed: number) => ({
			cancel: true,
			reason: `Not compacted: Prime Context aged old observations out of the prompt instead (about ${removed.toLocaleString("en-US")} tokens fewer; each stub names the id that reads it back).`,
		});
		if (before <= event.threshold) return skip(event.preparation.tokensBefore - before);
		const aged = agedOn(branch);
		const sent = applyAgeing(shortenKernelNotices(coalesceGoalContinuations(event.messages)), aged);
		const { record } = planFor(sent, aged, ageingOptions(session, branch, { cacheCold: false, force: true }));
		if (!record || before - record.removedTokens > event.threshold) return undefined;
		api.appendEntry(AGEING_ENTRY_TYPE, record);
		return skip(event.preparation.tokensBefore - before + record.removedTokens);
	});

	/** Tells the tracker what the branch holds and that a provider call is coming; a failure is reported once, never fatal. */
	let syncWarned = false;
	async function syncWorkflow(
		session: ContextSession,
		branch: ReturnType<ExtensionAPI["getBranch"]>,
	): Promise<WorkflowState | undefined> {
		try {
			return await session.workflow.sync(workflowSyncOf(branch, api.getContextUsage().tokens));
		} catch (error) {
			if (!syncWarned) api.warn(`Prime Context: the workflow state was not updated (${(error as Error).message}).`);
			syncWarned = true;
			return undefined;
		}
	}

	api.onHostRequest(PRIME_CONTEXT_REQUEST_TYPE, async (payload) => {
		const { type: _type, ...args } = payload;
		if (args.action === "text") return textOf(args.id, args.child);
		const response = await recover(args);
		return { text: response.text, isError: response.isError };
	});

	if (startConfig.enabled) api.registerTool(createPrimeContextTool((args) => recover(args)));

	api.registerCommand("pc", {
		description: "Prime Context: status, list, read, search, focus, add, done, pin, unpin, mode, cleanup, doctor",
		arguments: [
			"status",
			"list",
			"read",
			"search",
			"focus",
			"add",
			"done",
			"pin",
			"unpin",
			"mode",
			"cleanup",
			"doctor",
		],
		handler: (args) =>
			runPcCommand(args, {
				context,
				recover: (call) => recover(call, { audience: "human", hints: PC_HINTS }),
				get active() {
					return active();
				},
				setMode: (on) => {
					mode = on;
				},
				keep: () => api.keepSession(),
				ageing: async () => describeAgeing((await context()).config, api.getBranch()),
			}),
	});

	/** `prime_context.text(id)`: the exact text, read through the fork's parent when needed. */
	async function textOf(id: unknown, child?: unknown): Promise<{ text: string; isError: boolean }> {
		if (typeof id !== "string")
			return { text: "prime_context.text(id) needs an id such as obs_000001.", isError: true };
		const base = await (recoveryContext ?? context().then(ownRecoveryContext));
		const found = child === undefined || child === null || child === "" ? base : await childContext(base, child);
		if ("error" in found) return { text: found.error, isError: true };
		const { archive } = found;
		try {
			const record = await archive.get(id);
			if (record.bytes > TEXT_MAX_BYTES) {
				return {
					text: `${id} holds ${record.bytes} bytes, more than prime_context.text() loads (${TEXT_MAX_BYTES}); use prime_context.read() or search() on it.`,
					isError: true,
				};
			}
			return { text: (await archive.readBytes(id)).toString("utf8"), isError: false };
		} catch (error) {
			if (error instanceof ArchiveError)
				return { text: `${error.message}; list the archived ids with prime_context.list().`, isError: true };
			throw error;
		}
	}
}

/** Remove each folder in turn while it is empty; stop at the first that holds anything. */
function removeEmptyFolders(folders: string[]): void {
	for (const folder of folders) {
		try {
			rmdirSync(folder);
		} catch {
			return;
		}
	}
}

function refusal(text: string): RecoveryResponse {
	return { action: "invalid", text, isError: true, evidence: false, truncated: false };
}

function ownRecoveryContext(session: ContextSession): RecoveryContext {
	return {
		sessionId: session.sessionId,
		archive: session.archive,
		tasks: session.tasks,
		config: session.config,
		configProblems: session.configProblems,
		broker: session.broker,
	};
}

/** Storage follows the agent home unless PRIME_CONTEXT_HOME says otherwise. */
function contextEnv(api: ExtensionAPI): NodeJS.ProcessEnv {
	return api.agentHome ? { ...api.env, PRIME_AGENT_DIR: api.agentHome } : api.env;
}

/** The id in a session file's header line, or undefined when it cannot be read. */
async function sessionIdOf(sessionFile: string): Promise<string | undefined> {
	try {
		const text = await readFile(sessionFile, "utf8");
		const header = JSON.parse(text.split("\n", 1)[0] ?? "") as { type?: string; id?: unknown };
		return header.type === "session" && typeof header.id === "string" ? header.id : undefined;
	} catch {
		return undefined;
	}
}

/** Provider calls answered on `branch` (every assistant message, compacted ones included). */
function answersOn(branch: readonly SessionEntry[]): number {
	return branch.filter((entry) => entry.type === "message" && entry.message.role === "assistant").length;
}

/** `/pc status`'s ageing line. */
function describeAgeing(config: ContextSession["config"], branch: readonly SessionEntry[]): string {
	if (!config.ageing) return "ageing: off (prime-context.json `ageing`)";
	const records = ageingRecords(branch);
	const aged = records.reduce((sum, record) => sum + record.aged.length, 0);
	const removed = records.reduce((sum, record) => sum + record.removedTokens, 0);
	const window = `the newest ${config.ageingWindow} observations are never aged`;
	if (aged === 0) return `ageing: on (${window}); nothing aged yet`;
	const last = records.at(-1)?.reason ?? "pays";
	const why = {
		"cold-cache": "the cache was cold",
		uncached: "the model has no cache prices",
		pays: "it paid",
		"window-full": "the context was full",
	}[last];
	return `ageing: on (${window}); ${aged} observation${aged === 1 ? "" : "s"} aged, about ${removed.toLocaleString("en-US")} tokens out of every call (last because ${why}); each stub names its id for read/search`;
}
