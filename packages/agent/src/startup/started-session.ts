import type { Api, Model, Usage } from "@mariozechner/pi-ai";
import type { AutonomousRun } from "../autonomous/index.js";
import type { ChildEvent, ChildManager } from "../children/index.js";
import type { ExtensionRunner } from "../extensions/index.js";
import type { AgentPaths } from "../home/index.js";
import type { Mailbox } from "../messages/index.js";
import type { AgentSession } from "../orchestrator/index.js";
import type { Scheduler } from "../schedules/index.js";
import type { Session } from "../session/index.js";
import type { KernelStatus, SessionKernel } from "../tools/index.js";
import type { LongRunning } from "./long-running.js";

/** Everything a mode needs to drive one session. */
export interface StartedSession {
	paths: AgentPaths;
	session: Session;
	model: Model<Api>;
	kernel: SessionKernel;
	agentSession: AgentSession;
	/** The loaded extensions, and the problems met loading them. */
	extensions: ExtensionRunner;
	/** True when an existing session was picked up. */
	resumed: boolean;
	/** Notes for the user about what was decided (e.g. no session to continue). */
	notices: string[];
	onKernelStatus(listener: (status: KernelStatus) => void): () => void;
	/** The session's sub-agents (`rlm`). */
	children: ChildManager;
	/** Agent messages to this session. */
	mailbox: Mailbox;
	/** Progress of sub-agents at every depth below this session (spawned, finished, notices). */
	onChildEvent(listener: (event: ChildEvent) => void): () => void;
	/** Usage this session records for its children (each `rlm_child_usage` entry, as it is appended). */
	onChildUsage(listener: (usage: Usage) => void): () => void;
	/**
	 * Listen to every event after which `whenSettled` looks again: this session became idle, or a
	 * sub-agent at any depth finished, went idle or came back.
	 */
	onSettleChange(listener: () => void): () => void;
	/**
	 * Resolves once the session is idle, every sub-agent has settled and every notice has been
	 * handled by a turn (what `-p` waits for before it exits).
	 */
	whenSettled(signal?: AbortSignal): Promise<void>;
	/** Shut the sub-agents down, then the kernel. The session file needs no closing. */
	dispose(): Promise<void>;
	/** The session's goal (`/goal`, `--goal`, the kernel's `goal`). */
	goals: LongRunning["goals"];
	/** The autonomous run, with `--autonomous`. */
	autonomous?: AutonomousRun;
	/** A sub-agent's heartbeat (`rlm_heartbeat`); the root's lives in its daemon worker. */
	heartbeat?: Scheduler;
	/** `provider/id` of the model `ref` names when it can be used here (its provider has a key); else a `UserError`. */
	checkModel(ref: string): string;
}
