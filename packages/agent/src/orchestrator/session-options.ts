/** What an `AgentSession` is made of, and what it tells besides the loop's events. */
import type { AgentTool, ThinkingLevel } from "@mariozechner/pi-agent-core";
import type { Api, Model } from "@mariozechner/pi-ai";
import type { CompactionSettings, CompactResult } from "../compaction/index.js";
import type { CompactionReason, ExtensionRunner } from "../extensions/index.js";
import type { SessionKernel } from "../tools/index.js";

export interface AgentSessionOptions {
	model: Model<Api>;
	/**
	 * Key for the model's provider. A function is asked before each model call and may throw a
	 * `UserError` saying where to put a key: a session whose prompts are only local commands
	 * (`/pc status`) then runs without one.
	 */
	apiKey: string | (() => string);
	systemPrompt: string;
	tools: AgentTool[];
	/** Only these tools (the session's and the extensions'), when given; names are checked by the caller. */
	toolNames?: readonly string[];
	thinkingLevel?: ThinkingLevel;
	/** Loaded extensions; their tools join `tools` and their handlers see every event. */
	extensions?: ExtensionRunner;
	/** The session's kernel: compaction lists its names for `<ipython_state>` (and never resets it). */
	kernel?: SessionKernel;
	compaction?: CompactionSettings;
}

/** What the session does besides loop events: compactions, extension problems, command messages. */
export type SessionNotice =
	| { type: "compaction_start"; reason: CompactionReason }
	| { type: "compaction_end"; reason: CompactionReason; result: CompactResult }
	| { type: "compaction_failed"; reason: CompactionReason; message: string }
	| { type: "extension_problem"; path: string; phase: string; message: string };
