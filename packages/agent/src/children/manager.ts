import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { Usage } from "@mariozechner/pi-ai";
import type { HiddenMessage } from "../extensions/index.js";
import { type FamilyMember, Mailbox } from "../messages/index.js";
import { type ChildCancel, type ChildState, childWorks, residencyOf, runtimeOf, statusOf } from "./child-state.js";
import { NOTICE_CUSTOM_TYPE, noticeText } from "./notices.js";
import { checkName, defaultName, parseSpawnRequest, SpawnRefused } from "./options.js";
import type {
	ChildEvent,
	ChildHandle,
	ChildLaunchSpec,
	ChildResidency,
	ChildRunOutcome,
	ChildRuntime,
	ChildStatus,
	NoticeKind,
} from "./types.js";
import { addUsage, CHILD_USAGE_ENTRY, type ChildUsageData, emptyUsage } from "./usage.js";

/** What the registry needs from the session that spawns children. */
export interface ParentLink {
	/** The parent's session file (linked from each child's header). */
	readonly sessionFile: string;
	/** The parent's artifact folder; children get `sub-xxxxxxxx/` folders inside. */
	readonly artifactDir: string;
	/** The entry a spawn happens under (the assistant message whose cell is running). */
	leafId(): string | null;
	/** Append a `custom` entry (never sent to the model). */
	appendCustom(customType: string, data: unknown): void;
	/** A notice for the parent's model: steers a running turn, wakes an idle session. */
	deliver(message: HiddenMessage): void;
}

export interface ChildManagerOptions {
	parent: ParentLink;
	/** Depth of the parent (the root is 0). */
	depth: number;
	/** Deepest level a child may have. */
	maxDepth: number;
	/** `provider/id` of the parent's current model (a child's default). */
	parentModel(): string;
	/** `provider/id` of an available model for `ref`, or a `SpawnRefused` saying why not. */
	checkModel(ref: string): string;
	/** Start a child session (its kernel starts on first use). */
	launch(spec: ChildLaunchSpec): Promise<ChildRuntime>;
	onEvent?(event: ChildEvent): void;
	/** The text of the harness sub-agent spec `name` (`rlm(spec=name)`); throws `SpawnRefused` when there is none. */
	resolveSpec?(name: string): string;
	/** How long a finished child stays in memory with nothing to do (default 90 minutes). */
	idleEvictMs?: number;
}

/** How long a finished child with no work, no live children and no message stays in memory. */
export const CHILD_IDLE_EVICT_MS = 90 * 60_000;

interface ChildRecord {
	handle: ChildHandle;
	mailbox: Mailbox;
	depth: number;
	spawnedBy: string | null;
	/** Where it is in its life (see `ChildState`); each move replaces it. */
	state: ChildState;
	/** The child sent its parent a message during the current run. */
	replied: boolean;
	lastText: string;
	runUsage: Usage;
	/** What a stop or a return from passive waits for: the launch and first run, or the eviction's shutdown. */
	work: Promise<void>;
	/** The child's session file, once it has started. */
	sessionFile?: string;
	/** When its last run ended (or it was admitted). */
	lastActiveAt: number;
	/** `rlm(kernel="local")`: kept so a child brought back runs where it ran. */
	kernel?: "local";
}

/**
 * The children of one session: admission (`rlm(...)`), the registry of siblings, their runs in
 * parallel, the notices their endings produce, the usage they roll up to the spawning entry, and
 * their teardown.
 */
export class ChildManager {
	private readonly children = new Map<string, ChildRecord>();
	/** Deleted children whose launch or run has not settled yet (their notice is still to come). */
	private readonly settling = new Set<ChildRecord>();
	private closed = false;
	private evictTimer: NodeJS.Timeout | undefined;

	constructor(private readonly options: ChildManagerOptions) {}

	get depth(): number {
		return this.options.depth;
	}

	/** Admit a child and start it; returns at once with its handle. */
	spawn(payload: Record<string, unknown>): ChildHandle {
		if (this.closed) throw new SpawnRefused("rlm(): this session is shutting down; no new sub-agents start.");
		const { depth, maxDepth } = this.options;
		if (depth + 1 > maxDepth) {
			throw new SpawnRefused(
				`rlm(): the depth limit is reached: this agent is at depth ${depth} and sub-agents may go ${maxDepth} level${maxDepth === 1 ? "" : "s"} deep (RLM_MAX_DEPTH or "rlm": {"maxDepth": n} in settings.json). Do this work yourself.`,
			);
		}
		const request = parseSpawnRequest(payload);
		const taken = new Set(this.children.keys());
		const name = request.name ?? defaultName(request.task, taken);
		if (taken.has(name)) {
			throw new SpawnRefused(
				`rlm(name=${JSON.stringify(name)}): a sub-agent of this session already has that name; pick another or remove it first with await rlm.delete_subagent(${JSON.stringify(name)}).`,
			);
		}
		const model = this.options.checkModel(request.model ?? this.options.parentModel());
		const spec = request.spec === undefined ? undefined : { name: request.spec, text: this.spec(request.spec) };
		const id = `sub-${randomBytes(4).toString("hex")}`;
		const handle: ChildHandle = {
			rlm_child_id: id,
			name,
			session_dir: join(this.options.parent.artifactDir, id),
			model,
		};
		const record: ChildRecord = {
			handle,
			mailbox: new Mailbox(name),
			depth: depth + 1,
			spawnedBy: this.options.parent.leafId(),
			state: { phase: "starting" },
			replied: false,
			lastText: "",
			runUsage: emptyUsage(),
			work: Promise.resolve(),
			lastActiveAt: Date.now(),
			...(request.kernel ? { kernel: request.kernel } : {}),
		};
		this.armEviction();
		this.children.set(name, record);
		this.emit({ type: "child_spawned", ...handle, depth: record.depth });
		record.work = this.start(record, request.task, request.thinking, spec);
		return handle;
	}

	private spec(name: string): string {
		if (!this.options.resolveSpec)
			throw new SpawnRefused("rlm(spec=...): this session has no harness to take specs from.");
		try {
			return this.options.resolveSpec(name);
		} catch (error) {
			if (error instanceof SpawnRefused) throw error;
			throw new SpawnRefused(`rlm(spec=${JSON.stringify(name)}): ${(error as Error).message}`);
		}
	}

	/** The children, in spawn order. */
	list(): (ChildHandle & { status: ChildStatus; residency: ChildResidency; session_file?: string; depth: number })[] {
		return [...this.children.values()].map((record) => {
			const status = statusOf(record.state);
			const runtime = runtimeOf(record.state);
			return {
				...record.handle,
				// An idle child woken by a message runs again until that turn ends.
				status: status === "idle" && runtime && !runtime.isIdle() ? "running" : status,
				residency: residencyOf(record.state),
				depth: record.depth,
				...(record.sessionFile ? { session_file: record.sessionFile } : {}),
			};
		});
	}

	/** Some child is in memory (running or retained). */
	get hasLiveChildren(): boolean {
		for (const { state } of this.children.values())
			if (residencyOf(state) !== "passive" && statusOf(state) !== "cancelled") return true;
		return this.settling.size > 0;
	}

	/** A child as a receiver of agent messages: its mailbox, or why it has none. */
	receiver(name: string): FamilyMember | undefined {
		const record = this.children.get(name);
		if (!record) return undefined;
		// A child still starting gets its messages once its session is up.
		const status = statusOf(record.state);
		if (status === "starting" || status === "running" || status === "idle") return { name, mailbox: record.mailbox };
		return { name, why: `it has ${status === "failed" ? "failed" : "been cancelled"}` };
	}

	/** Names of the children, in spawn order. */
	names(): string[] {
		return [...this.children.keys()];
	}

	/** A child told its parent something during its current run: no `completed_without_reply` then. */
	noteReply(name: string): void {
		const record = this.children.get(name);
		if (record) record.replied = true;
	}

	/**
	 * Cancel a child (starting, running or idle), shut its session down and free its name. Returns
	 * the status it had.
	 */
	async delete(name: unknown): Promise<{ name: string; status: ChildStatus }> {
		const key = checkName(name, "rlm.delete_subagent(...)");
		const record = this.children.get(key);
		if (!record) {
			const names = [...this.children.keys()];
			throw new SpawnRefused(
				`rlm.delete_subagent(${JSON.stringify(key)}): no sub-agent has that name${names.length ? ` (there are: ${names.join(", ")})` : ""}; await rlm.list_subagents() lists them.`,
			);
		}
		this.children.delete(key);
		// Its name is free at once, but it counts as busy until it has settled (a child deleted
		// while starting ends, with its notice, only once its launch is done).
		this.settling.add(record);
		const settled = () => this.settling.delete(record);
		record.work.then(settled, settled);
		const status = statusOf(record.state);
		await this.stop(record, { reason: "deleted by rlm.delete_subagent", silent: false });
		return { name: key, status };
	}

	/** False while a child starts, runs, comes back from passive, or has a delivered message to take. */
	isIdle(): boolean {
		if (this.settling.size > 0) return false;
		for (const record of this.children.values()) if (childWorks(record.state)) return false;
		return true;
	}

	/** Cancel every child without notices and shut each down (its own children and kernel too). */
	async shutdown(): Promise<void> {
		this.closed = true;
		clearInterval(this.evictTimer);
		const records = [...this.children.values()];
		this.children.clear();
		await Promise.all([
			...records.map((record) => this.stop(record, { reason: "the parent session ended", silent: true }, true)),
			// Deleted children still starting: their launch shuts them down once it is done.
			...[...this.settling].map((record) => record.work.catch(() => undefined)),
		]);
	}

	/**
	 * Cancel a child. A child still starting is shut down by its launch as soon as it is up; only
	 * `waitForLaunch` (shutdown) waits for that, since a launch may take a while.
	 */
	private async stop(record: ChildRecord, cancel: ChildCancel, waitForLaunch = false): Promise<void> {
		const state = record.state;
		if (state.phase === "stopping") cancel = state.cancel;
		else {
			const was = state.phase;
			record.state = { phase: "stopping", was, cancel, ...(runtimeOf(state) ? { runtime: runtimeOf(state) } : {}) };
			if (was === "starting") {
				if (waitForLaunch) await record.work.catch(() => undefined);
				return;
			}
			if (was === "running") runtimeOf(state)?.abort();
			// A message was bringing it back: that launch ends (and shuts the session it made down) first.
			if (state.phase === "passive") await state.back;
		}
		// The first run ends promptly once aborted; then the session goes.
		await record.work.catch(() => undefined);
		const runtime = runtimeOf(record.state);
		if (runtime && !runtime.isIdle()) runtime.abort();
		await runtime?.dispose().catch(() => undefined);
		const now = record.state;
		if (now.phase === "stopping")
			record.state = { phase: now.was === "failed" ? "failed" : "cancelled", cancel, ...(runtime ? { runtime } : {}) };
	}

	private async start(
		record: ChildRecord,
		task: string,
		thinkingLevel: ChildLaunchSpec["thinkingLevel"],
		spec?: { name: string; text: string },
	): Promise<void> {
		const { handle } = record;
		let runtime: ChildRuntime;
		try {
			runtime = await this.options.launch({
				id: handle.rlm_child_id,
				name: handle.name,
				model: handle.model,
				thinkingLevel,
				sessionDir: handle.session_dir,
				depth: record.depth,
				parentSessionFile: this.options.parent.sessionFile,
				parentEntryId: record.spawnedBy,
				mailbox: record.mailbox,
				...(record.kernel ? { kernel: record.kernel } : {}),
			});
		} catch (error) {
			if (record.state.phase === "stopping") return this.finish(record, { status: "aborted" });
			return this.finish(record, { status: "error", errorMessage: `it could not start: ${(error as Error).message}` });
		}
		record.sessionFile = runtime.sessionFile;
		if (record.state.phase === "stopping") {
			// Cancelled while starting: shut it down before it runs anything.
			record.state = { ...record.state, runtime };
			await runtime.dispose().catch(() => undefined);
			return this.finish(record, { status: "aborted" });
		}
		record.state = { phase: "running", runtime };
		this.listen(record, runtime);
		const outcome = await runtime.prompt(firstMessage(task, handle, this.options.parent.sessionFile, spec));
		this.finish(record, outcome);
	}

	private listen(record: ChildRecord, runtime: ChildRuntime): void {
		runtime.onAssistant(({ text, usage }) => {
			if (text.trim()) record.lastText = text;
			addUsage(record.runUsage, usage);
		});
		// Usage the child records for its own children is part of its usage here. It lands in the
		// first run's sum, or at once in an entry of its own once that run has ended (none is lost).
		runtime.onChildUsage((usage) => {
			addUsage(record.runUsage, usage);
			if (statusOf(record.state) !== "running") this.flushUsage(record);
		});
		runtime.onWokenTurnEnd((outcome) => this.finish(record, outcome));
	}

	/** Check now and then for finished children to evict. */
	private armEviction(): void {
		if (this.evictTimer) return;
		const idleMs = this.options.idleEvictMs ?? CHILD_IDLE_EVICT_MS;
		this.evictTimer = setInterval(() => this.evictIdle(idleMs), Math.max(50, Math.min(idleMs / 4, 60_000)));
		this.evictTimer.unref?.();
	}

	/**
	 * Evict each child idle for `idleMs` with no work, no message waiting, no heartbeat and no live
	 * child of its own: its session is shut down (the kernel's variables are saved) and its mailbox holds
	 * messages until one brings it back.
	 */
	private evictIdle(idleMs: number): void {
		const now = Date.now();
		for (const record of this.children.values()) {
			const { state } = record;
			if (state.phase !== "idle") continue;
			const { runtime } = state;
			if (!runtime.isIdle() || runtime.hasLiveChildren || runtime.hasHeartbeat || now - record.lastActiveAt < idleMs)
				continue;
			record.state = { phase: "passive" };
			record.mailbox.detach(() => void this.rehydrate(record));
			const { handle } = record;
			this.emit({
				type: "child_residency",
				rlm_child_id: handle.rlm_child_id,
				name: handle.name,
				residency: "passive",
			});
			record.work = runtime.dispose().catch(() => undefined);
		}
	}

	/** A message for a passive child: start its session again from its file and kernel snapshot. */
	private rehydrate(record: ChildRecord): Promise<void> {
		const { state } = record;
		if (state.phase !== "passive") return Promise.resolve();
		if (state.back) return state.back;
		const back = this.bringBack(record).finally(() => {
			if (record.state.phase === "passive" && record.state.back === back) record.state = { phase: "passive" };
		});
		record.state = { phase: "passive", back };
		return back;
	}

	private async bringBack(record: ChildRecord): Promise<void> {
		const { handle } = record;
		// Its last session must have saved its kernel variables first.
		await record.work;
		if (this.closed || record.state.phase !== "passive" || !record.sessionFile) return;
		try {
			const runtime = await this.options.launch({
				id: handle.rlm_child_id,
				name: handle.name,
				model: handle.model,
				sessionDir: handle.session_dir,
				depth: record.depth,
				parentSessionFile: this.options.parent.sessionFile,
				parentEntryId: record.spawnedBy,
				mailbox: record.mailbox,
				resumeFile: record.sessionFile,
				...(record.kernel ? { kernel: record.kernel } : {}),
			});
			// Stopped meanwhile: a stop waits for this launch and shuts the new session down.
			const now = record.state as ChildState; // read again after the launch
			if (now.phase !== "passive") {
				if (now.phase === "stopping") record.state = { ...now, runtime };
				else await runtime.dispose().catch(() => undefined);
				return;
			}
			record.state = { phase: "idle", runtime };
			record.lastActiveAt = Date.now();
			this.listen(record, runtime);
			this.emit({
				type: "child_residency",
				rlm_child_id: handle.rlm_child_id,
				name: handle.name,
				residency: "retained",
			});
		} catch (error) {
			this.finish(record, {
				status: "error",
				errorMessage: `it could not be brought back: ${(error as Error).message}`,
			});
		}
	}

	/** A run of the child ended: roll its usage up, tell the parent when it did not reply. */
	private finish(record: ChildRecord, outcome: ChildRunOutcome): void {
		const { handle, state } = record;
		record.lastActiveAt = Date.now();
		this.flushUsage(record);
		const cancel = state.phase === "stopping" || "cancel" in state ? state.cancel : undefined;
		const runtime = runtimeOf(state);
		const kept = runtime ? { runtime } : {};
		let kind: NoticeKind | undefined;
		if (cancel || outcome.status === "aborted") {
			record.state = { phase: "cancelled", ...kept, ...(cancel ? { cancel } : {}) };
			kind = cancel?.silent ? undefined : "cancelled";
		} else if (outcome.status === "error" || !runtime) {
			record.state = { phase: "failed", ...kept };
			kind = "failed";
		} else {
			record.state = { phase: "idle", runtime };
			if (!record.replied) kind = "completed_without_reply";
		}
		const replied = record.replied;
		record.replied = false;
		this.emit({
			type: "child_finished",
			rlm_child_id: handle.rlm_child_id,
			name: handle.name,
			status: statusOf(record.state),
			replied,
		});
		if (!kind) return;
		const text = noticeText({
			kind,
			id: handle.rlm_child_id,
			name: handle.name,
			sessionDir: handle.session_dir,
			lastText: record.lastText,
			error: kind === "cancelled" ? cancel?.reason : outcome.errorMessage,
		});
		this.emit({ type: "child_notice", rlm_child_id: handle.rlm_child_id, name: handle.name, kind, text });
		this.options.parent.deliver({
			customType: NOTICE_CUSTOM_TYPE,
			content: text,
			details: { kind, rlm_child_id: handle.rlm_child_id, name: handle.name },
		});
	}

	/** Record the usage summed since the last entry (the child's own and its children's). */
	private flushUsage(record: ChildRecord): void {
		if (record.runUsage.totalTokens === 0 && record.runUsage.cost.total === 0) return;
		const data: ChildUsageData = {
			rlm_child_id: record.handle.rlm_child_id,
			name: record.handle.name,
			spawnedBy: record.spawnedBy,
			usage: record.runUsage,
		};
		record.runUsage = emptyUsage();
		this.options.parent.appendCustom(CHILD_USAGE_ENTRY, data);
	}

	private emit(event: ChildEvent): void {
		this.options.onEvent?.(event);
	}
}

/** The child's first message: the task, marked as coming from the parent, and how to answer. */
export function firstMessage(
	task: string,
	handle: ChildHandle,
	parentSessionFile: string,
	spec?: { name: string; text: string },
): string {
	return [
		`[Task from your parent agent. You are its sub-agent "${handle.name}" (${handle.rlm_child_id}); parent session: ${parentSessionFile}.]`,
		"",
		...(spec ? [`[Your role, from the harness sub-agent spec "${spec.name}":]`, spec.text, "", "[The task:]"] : []),
		task,
		"",
		`[When you are done, send your result to the parent with \`await agent_message.send(text, receiver_role="parent")\`, or write files into ${handle.session_dir} and say where; then end your turn.]`,
	].join("\n");
}
