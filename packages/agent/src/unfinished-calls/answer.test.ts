import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentEvent } from "@mariozechner/pi-agent-core";
import type { AssistantMessage, ToolResultMessage } from "@mariozechner/pi-ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { answerMessage } from "../../test/agent-scripts.js";
import { Session } from "../session/index.js";
import { answerUnfinishedCalls } from "./answer.js";
import { RUNNING_CALL_FILE, RunningCallRecord, readRunningCall } from "./record.js";

let dir: string;
beforeEach(() => {
	dir = mkdtempSync(join(tmpdir(), "prime-unfinished-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const STOPPED = "the agent process running this session stopped (it crashed or was killed)";

/** An answer calling `ipython` once per code, ended as `stopReason` says. */
function calls(codes: string[], stopReason: AssistantMessage["stopReason"] = "toolUse"): AssistantMessage {
	return {
		...answerMessage(""),
		content: codes.map((code, index) => ({
			type: "toolCall",
			id: `call_${index}`,
			name: "ipython",
			arguments: { code },
		})),
		stopReason,
	};
}

function result(toolCallId: string, text: string): ToolResultMessage {
	return {
		role: "toolResult",
		toolCallId,
		toolName: "ipython",
		content: [{ type: "text", text }],
		isError: false,
		timestamp: 0,
	};
}

/** A session whose last answer called `codes`; the first `answered` calls have their results. */
function sessionWith(codes: string[], answered = 0, stopReason?: AssistantMessage["stopReason"]): Session {
	const session = Session.create({ dir, cwd: dir });
	session.appendMessage({ role: "user", content: "go", timestamp: 0 });
	session.appendMessage(calls(codes, stopReason));
	for (let index = 0; index < answered; index++) session.appendMessage(result(`call_${index}`, `done ${index}`));
	return session;
}

function recordRunning(session: Session, toolCallId: string, output: string): void {
	mkdirSync(session.artifactDir, { recursive: true });
	const running = { toolCallId, toolName: "ipython", startedAt: 1000, updatedAt: 3500, output };
	writeFileSync(join(session.artifactDir, RUNNING_CALL_FILE), JSON.stringify(running));
}

/** The results recorded after the answer, as the model reads them, reading the file again. */
function recordedResults(session: Session): { id: string; text: string; details: unknown }[] {
	return Session.open(session.path)
		.branch()
		.flatMap((entry) =>
			entry.type === "message" && entry.message.role === "toolResult"
				? [
						{
							id: entry.message.toolCallId,
							text: (entry.message.content[0] as { text: string }).text,
							details: entry.message.details,
						},
					]
				: [],
		);
}

describe("a session picked up after its process stopped during a call", () => {
	it("the running call gets the output it printed; the calls after it in the answer get `not run`", () => {
		const session = sessionWith(["a()", "b()", "c()"], 1);
		recordRunning(session, "call_1", "step 1\nstep 2\n");
		expect(answerUnfinishedCalls(session, session.artifactDir)).toBe(2);
		const results = recordedResults(session);
		expect(results.map((entry) => [entry.id, entry.text])).toEqual([
			["call_0", "done 0"],
			[
				"call_1",
				`step 1\nstep 2\n[the cell did not finish: ${STOPPED} while it ran, and its kernel stopped with it. The output above is what it printed until then; the rest, and its result, are lost. The next cell runs in a new kernel.]`,
			],
			[
				"call_2",
				`[not run: ${STOPPED} during an earlier cell of this answer, before this one started. The next cell runs in a new kernel.]`,
			],
		]);
		expect(results[1]?.details).toEqual({
			status: "died",
			isError: true,
			stdout: "step 1\nstep 2\n",
			stderr: "",
			durationMs: 2500,
			diffs: [],
			writtenFiles: [],
			cutOff: true,
		});
		// Picked up once more: the calls have their results, nothing is added.
		expect(answerUnfinishedCalls(Session.open(session.path), session.artifactDir)).toBe(0);
		expect(recordedResults(session)).toHaveLength(3);
	});

	it("a cell that had printed nothing says so", () => {
		const session = sessionWith(["wait()"]);
		recordRunning(session, "call_0", "");
		expect(answerUnfinishedCalls(session, session.artifactDir)).toBe(1);
		expect(recordedResults(session).map((entry) => entry.text)).toEqual([
			`[the cell did not finish: ${STOPPED} while it ran, and its kernel stopped with it. It had printed nothing until then; its result is lost. The next cell runs in a new kernel.]`,
		]);
	});

	it("without a record of the call (none, another call's, or a file that is not one), the result says nothing is known", () => {
		const unknown = `[no result of this cell was recorded: ${STOPPED} or could not save it, so whether it ran, and what it printed, is unknown. The next cell runs in a new kernel.]`;
		const none = sessionWith(["a()"]);
		expect(answerUnfinishedCalls(none, none.artifactDir)).toBe(1);
		expect(recordedResults(none).map((entry) => entry.text)).toEqual([unknown]);

		const other = sessionWith(["a()"]);
		recordRunning(other, "call_9", "not this call's output\n");
		expect(answerUnfinishedCalls(other, other.artifactDir)).toBe(1);
		expect(recordedResults(other).map((entry) => entry.text)).toEqual([unknown]);

		const garbage = sessionWith(["a()"]);
		mkdirSync(garbage.artifactDir, { recursive: true });
		writeFileSync(join(garbage.artifactDir, RUNNING_CALL_FILE), '{"toolCallId": "call_0", "output": 7}');
		expect(readRunningCall(garbage.artifactDir)).toBeUndefined();
		expect(answerUnfinishedCalls(garbage, garbage.artifactDir)).toBe(1);
		expect(recordedResults(garbage).map((entry) => entry.text)).toEqual([unknown]);
	});

	it("leaves alone a session whose calls all have results, whose answer failed or was stopped, or that went on", () => {
		const cases: Session[] = [
			sessionWith(["a()"], 1),
			sessionWith(["a()"], 0, "error"),
			sessionWith(["a()"], 0, "aborted"),
			sessionWith([]),
		];
		const wentOn = sessionWith(["a()"]);
		wentOn.appendMessage({ role: "user", content: "and now?", timestamp: 0 });
		cases.push(wentOn);
		for (const session of cases) {
			recordRunning(session, "call_0", "output\n");
			const before = readFileSync(session.path, "utf8");
			expect(answerUnfinishedCalls(session, session.artifactDir)).toBe(0);
			expect(readFileSync(session.path, "utf8")).toBe(before);
		}
	});
});

describe("the record of a running call", () => {
	const event = (value: Record<string, unknown>) => value as unknown as AgentEvent;

	it("holds the latest output while the call runs, and is removed once its result is recorded", () => {
		const artifacts = join(dir, "artifacts");
		const record = new RunningCallRecord(artifacts);
		record.onEvent(event({ type: "tool_execution_start", toolCallId: "call_0", toolName: "ipython", args: {} }));
		expect(readRunningCall(artifacts)).toMatchObject({ toolCallId: "call_0", toolName: "ipython", output: "" });
		const partialResult = { content: [{ type: "text", text: "tick 0\n" }] };
		record.onEvent(event({ type: "tool_execution_update", toolCallId: "call_0", partialResult }));
		expect(readRunningCall(artifacts)?.output).toBe("tick 0\n");
		record.onEvent(event({ type: "message_end", message: result("call_0", "tick 0\n") }));
		expect(existsSync(join(artifacts, RUNNING_CALL_FILE))).toBe(false);
	});

	it("a record the disk refuses never fails the call", () => {
		// A file where the artifact folder would be: nothing can be written under it.
		const blocked = join(dir, "blocked");
		writeFileSync(blocked, "");
		const record = new RunningCallRecord(join(blocked, "artifacts"));
		expect(() =>
			record.onEvent(event({ type: "tool_execution_start", toolCallId: "call_0", toolName: "ipython", args: {} })),
		).not.toThrow();
		expect(readRunningCall(join(blocked, "artifacts"))).toBeUndefined();
	});
});
