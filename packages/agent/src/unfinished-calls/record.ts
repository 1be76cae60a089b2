import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { AgentEvent } from "@mariozechner/pi-agent-core";
import { ensurePrivateDir, PRIVATE_FILE_MODE, writeFileAtomically } from "../home/index.js";

/** The file beside a session (in its artifact folder) that holds the call under way. */
export const RUNNING_CALL_FILE = "running-call.json";

/** Characters of a recorded output read back at most (a hand-edited file cannot flood the model). */
const OUTPUT_READ_LIMIT = 64 * 1024;

/** A call under way, as last recorded: what it has printed so far. */
export interface RunningCall {
	toolCallId: string;
	toolName: string;
	/** Epoch ms when the call started, and when its output was last recorded. */
	startedAt: number;
	updatedAt: number;
	/** Its latest output as its progress updates carry it (the tail, after a note of what came before). */
	output: string;
}

/**
 * Keeps `<artifacts>/running-call.json` for the call under way: written when it starts and with each
 * progress update, removed once its result is in the session. It outlives only a process that died
 * during the call (killed, crashed): the next run of the session then tells the model the call was
 * cut off, with the output it had printed (`answerUnfinishedCalls`).
 *
 * Recording is best effort: a write the disk refuses never fails the call (the result, when it
 * comes, is recorded in the session as always).
 */
export class RunningCallRecord {
	private current: RunningCall | undefined;

	constructor(private readonly artifactDir: string) {}

	/** Follow the session's loop events (after each was recorded in the session). */
	readonly onEvent = (event: AgentEvent): void => {
		switch (event.type) {
			case "tool_execution_start":
				this.current = {
					toolCallId: event.toolCallId,
					toolName: event.toolName,
					startedAt: Date.now(),
					updatedAt: Date.now(),
					output: "",
				};
				this.write();
				return;
			case "tool_execution_update":
				if (this.current?.toolCallId !== event.toolCallId) return;
				this.current.output = textOf(event.partialResult);
				this.current.updatedAt = Date.now();
				this.write();
				return;
			case "message_end":
				// The result is in the session now.
				if (event.message.role === "toolResult" && event.message.toolCallId === this.current?.toolCallId) this.clear();
				return;
			case "agent_end":
				// The run ended in this process: nothing it left is a cut-off call.
				if (this.current) this.clear();
				return;
		}
	};

	private write(): void {
		try {
			ensurePrivateDir(this.artifactDir);
			writeFileAtomically(runningCallPath(this.artifactDir), JSON.stringify(this.current), PRIVATE_FILE_MODE);
		} catch {
			// Best effort (see the class comment).
		}
	}

	private clear(): void {
		this.current = undefined;
		removeRunningCall(this.artifactDir);
	}
}

export function runningCallPath(artifactDir: string): string {
	return join(artifactDir, RUNNING_CALL_FILE);
}

/** The call recorded as under way in `artifactDir`; undefined when none is, or the file is not one of ours. */
export function readRunningCall(artifactDir: string): RunningCall | undefined {
	const path = runningCallPath(artifactDir);
	if (!existsSync(path)) return undefined;
	try {
		const value = JSON.parse(readFileSync(path, "utf8")) as Partial<RunningCall>;
		const { toolCallId, toolName, startedAt, updatedAt, output } = value;
		if (typeof toolCallId !== "string" || typeof toolName !== "string" || typeof output !== "string") return undefined;
		if (typeof startedAt !== "number" || typeof updatedAt !== "number") return undefined;
		return { toolCallId, toolName, startedAt, updatedAt, output: output.slice(-OUTPUT_READ_LIMIT) };
	} catch {
		return undefined;
	}
}

export function removeRunningCall(artifactDir: string): void {
	try {
		rmSync(runningCallPath(artifactDir), { force: true });
	} catch {
		// Left behind, it names a call whose result is recorded: it is never used.
	}
}

function textOf(result: unknown): string {
	const content = (result as { content?: unknown } | undefined)?.content;
	if (!Array.isArray(content)) return "";
	return content
		.map((part: { type?: string; text?: unknown }) =>
			part?.type === "text" && typeof part.text === "string" ? part.text : "",
		)
		.join("");
}
