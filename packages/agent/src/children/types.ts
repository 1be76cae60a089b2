import type { ThinkingLevel } from "@mariozechner/pi-agent-core";
import type { Usage } from "@mariozechner/pi-ai";
import type { Mailbox } from "../messages/index.js";

/** What `await rlm(...)` returns: admission only, never the child's answer. */
export interface ChildHandle {
	rlm_child_id: string;
	name: string;
	session_dir: string;
	model: string;
}

/** Everything a launcher needs to start a child session. */
export interface ChildLaunchSpec {
	id: string;
	name: string;
	/** `provider/id`, already checked to be available. */
	model: string;
	thinkingLevel?: ThinkingLevel;
	/** The child's `sub-xxxxxxxx/` folder (its session file and artifacts live inside). */
	sessionDir: string;
	/** Depth of the child (the root is 0). */
	depth: number;
	parentSessionFile: string;
	parentEntryId: string | null;
	/** The child's mailbox, made at admission so messages sent while it starts wait for it. */
	mailbox: Mailbox;
	/** Bring a passive child back: continue this session file (its kernel variables are restored). */
	resumeFile?: string;
	/** `rlm(kernel="local")`: a kernel on this machine; without it, where the parent's kernel runs. */
	kernel?: "local";
}

/** A running child session, as the registry sees it. */
export interface ChildRuntime {
	readonly sessionFile: string;
	/** Run one prompt to its end. */
	prompt(text: string): Promise<ChildRunOutcome>;
	/** Listen to the child's own finished messages (usage, last text). */
	onAssistant(listener: (message: { text: string; usage: Usage }) => void): () => void;
	/** Listen to the usage the child records for its own children (its `rlm_child_usage` entries). */
	onChildUsage(listener: (usage: Usage) => void): () => void;
	/** A turn started by a delivered message (an agent message) ended. */
	onWokenTurnEnd(listener: (outcome: ChildRunOutcome) => void): () => void;
	/** False while a turn runs, a delivered message waits for one, or one of its own children works. */
	isIdle(): boolean;
	/** One of its own children is in memory (running or retained): it is not evicted then. */
	readonly hasLiveChildren: boolean;
	/** Its heartbeat is set (`rlm_heartbeat`): it is not evicted then. */
	readonly hasHeartbeat: boolean;
	/** Abort the running turn. */
	abort(): void;
	/** Shut the child down: its own children, its kernel. */
	dispose(): Promise<void>;
}

export interface ChildRunOutcome {
	status: "ok" | "error" | "aborted";
	errorMessage?: string;
}

export type ChildStatus = "starting" | "running" | "idle" | "failed" | "cancelled";

/**
 * Where a child lives: running (a turn or its start is under way), retained (finished, its session
 * in memory, it can receive messages), passive (evicted after being idle; its session file and
 * kernel snapshot stay, and a message brings it back).
 */
export type ChildResidency = "running" | "retained" | "passive";

/** Progress of children, for print and JSON modes. */
export type ChildEvent =
	| { type: "child_spawned"; rlm_child_id: string; name: string; model: string; session_dir: string; depth: number }
	| { type: "child_finished"; rlm_child_id: string; name: string; status: ChildStatus; replied: boolean }
	| { type: "child_notice"; rlm_child_id: string; name: string; kind: NoticeKind; text: string }
	| { type: "child_residency"; rlm_child_id: string; name: string; residency: "passive" | "retained" };

export type NoticeKind = "completed_without_reply" | "failed" | "cancelled";
