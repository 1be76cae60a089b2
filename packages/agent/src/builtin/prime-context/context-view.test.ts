import type { AgentMessage } from "@mariozechner/pi-agent-core";
import { EMPTY_TASK } from "prime-agent-context";
import { describe, expect, it } from "vitest";
import type { SessionEntry } from "../../session/index.js";
import {
	coalesceGoalContinuations,
	normalizePoll,
	SAME_POLL_RESULT,
	shortenKernelNotices,
	taskText,
} from "./context-view.js";

const note = (customType: string, content: string): AgentMessage => ({
	role: "host",
	customType,
	content,
	display: false,
	timestamp: 1,
});
const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 1 });
const entry = (message: AgentMessage, id: string): SessionEntry =>
	({ type: "message", id, parentId: null, timestamp: "2026-01-01T00:00:00.000Z", message }) as SessionEntry;

function inventory(count: number): string {
	const names = Array.from({ length: count }, (_, index) => `name_${index} (int)`).join(", ");
	return `<ipython_state>\nThe conversation above was compacted, but the IPython kernel persisted: nothing was reset.\nThese names are still defined; use them directly and do not redefine or re-read them:\n${names}\n</ipython_state>`;
}

describe("kernel-state notices", () => {
	it("keeps every notice as it was and replaces a long inventory with the count and a globals() hint", () => {
		const messages = [note("kernel_fresh", "[old note]"), user("go"), note("ipython_state", inventory(45))];
		const trimmed = shortenKernelNotices(messages);
		expect(trimmed.map((message) => message.role)).toEqual(["host", "user", "host"]);
		expect(trimmed[0]).toBe(messages[0]);
		const text = (trimmed[2] as { content: string }).content;
		expect(text).toContain("45 names are defined; look one up with `globals().get('name')`");
		expect(text).not.toContain("name_44");
		expect(text.startsWith("<ipython_state>")).toBe(true);
	});

	it("sends an earlier notice the same way once a newer one follows (what was sent is kept)", () => {
		const before = [user("go"), note("kernel_fresh", "[first resume]")];
		const after = [...before, user("again"), note("kernel_fresh", "[second resume]")];
		expect(JSON.stringify(shortenKernelNotices(after).slice(0, 2))).toBe(JSON.stringify(shortenKernelNotices(before)));
	});

	it("counts the names an inventory left out ('and N more')", () => {
		const text = inventory(3).replace("name_2 (int)", "name_2 (int), and 1,200 more (`dir()` lists them all)");
		const trimmed = shortenKernelNotices([note("ipython_state", text)]);
		expect((trimmed[0] as { content: string }).content).toContain("1203 names are defined");
	});

	it("leaves short notices alone and returns the very same list", () => {
		const messages = [note("kernel_fresh", "[old note]"), user("go"), note("ipython_state", inventory(5))];
		expect(shortenKernelNotices(messages)).toBe(messages);
	});
});

describe("task text", () => {
	const branch = [entry(user("ROOT request"), "a"), entry(user("newest instruction"), "b")];

	it("is null when everything is visible and the snapshot is empty", () => {
		expect(taskText(EMPTY_TASK, branch, [user("ROOT request"), user("newest instruction")])).toBeNull();
	});

	it("restores a hidden root request and a hidden newest instruction as exact copies", () => {
		const text = taskText(EMPTY_TASK, branch, [user("summary")]);
		expect(text).toBe(
			'<prime_context_task>\nROOT_REQUEST\n"ROOT request"\n\nLATEST_USER_INSTRUCTION\n"newest instruction"\n</prime_context_task>',
		);
	});

	it("bounds a long hidden request and says how much was left out", () => {
		const long = "x".repeat(5000);
		const text = taskText(EMPTY_TASK, [entry(user(long), "a")], []) ?? "";
		expect(text).toContain(`${"x".repeat(4000)} [... 1000 more characters]`);
	});
});

describe("task text with the workflow", () => {
	it("adds the workflow section, alone or after the other sections", () => {
		const workflow = "WORKFLOW\nrequirements_revision=1 locked=no\nKeep the goal open.";
		expect(taskText(EMPTY_TASK, [], [], workflow)).toBe(`<prime_context_task>\n${workflow}\n</prime_context_task>`);
		const text = taskText(EMPTY_TASK, [entry(user("ROOT request"), "a")], [user("summary")], workflow);
		expect(text).toBe(`<prime_context_task>\nROOT_REQUEST\n"ROOT request"\n\n${workflow}\n</prime_context_task>`);
	});
});

let calls = 0;
const assistantCall = (code: string): AgentMessage =>
	({
		role: "assistant",
		content: [{ type: "toolCall", id: `call_${++calls}`, name: "ipython", arguments: { code } }],
		stopReason: "toolUse",
		timestamp: 1,
	}) as unknown as AgentMessage;
const result = (text: string): AgentMessage =>
	({
		role: "toolResult",
		toolCallId: `call_${calls}`,
		toolName: "ipython",
		content: [{ type: "text", text }],
		isError: false,
		timestamp: 1,
	}) as unknown as AgentMessage;
const said = (text: string): AgentMessage =>
	({
		role: "assistant",
		content: [{ type: "text", text }],
		stopReason: "stop",
		timestamp: 1,
	}) as unknown as AgentMessage;
const prompt = (n: number) =>
	note("goal_context", `Goal continuation ${n}: keep working on "watch the job" (elapsed ${n * 30}s).`);
/** One idle continuation: the prompt, a poll, its result, a short answer. */
const poll = (n: number, text: string) => [
	prompt(n),
	assistantCall("print(job.status())"),
	result(text),
	said("Still waiting."),
];
const uuid = (n: number) => `4f1c2a9e-0b7d-4c1e-9a55-${String(n).padStart(12, "0")}`;
const running = (n: number) =>
	`job ${uuid(n)} running, elapsed ${(n * 30.4).toFixed(1)}s at 2026-12-01T16:${String(n).padStart(2, "0")}:07Z (obs_${String(100 + n).padStart(6, "0")})`;
const contents = (messages: AgentMessage[]) => messages.map((m) => (m as { content: unknown }).content);

const FINISHED = "job finished after 3 retries: 3 files written to out/, exit status 0, full log in job.log";
const resultTexts = (messages: AgentMessage[]) =>
	messages.filter((m) => m.role === "toolResult").map((m) => (contents([m])[0] as { text: string }[])[0]?.text);
/** JSON of each message: the bytes a provider is sent for it. */
const bytes = (messages: AgentMessage[]) => messages.map((m) => JSON.stringify(m));

describe("goal continuation coalescing", () => {
	it("twenty identical idle polls: the first is sent whole, the other nineteen as the same-result marker", () => {
		const messages = [
			user("watch the job until it ends"),
			...Array.from({ length: 20 }, (_, i) => poll(i + 1, running(i + 1))).flat(),
			prompt(21),
		];
		const out = coalesceGoalContinuations(messages);
		expect(resultTexts(out)).toEqual([running(1), ...Array.from({ length: 19 }, () => SAME_POLL_RESULT)]);
		// Nothing is dropped, and every prompt and answer is sent as it was recorded.
		expect(out).toHaveLength(messages.length);
		out.forEach((message, index) => {
			if (message.role !== "toolResult") expect(message).toBe(messages[index]);
		});
		// The marker keeps the result's place: its tool call id and tool name.
		const marked = out[7] as { toolCallId: string; toolName: string };
		const original = messages[7] as { toolCallId: string; toolName: string };
		expect([marked.toolCallId, marked.toolName]).toEqual([original.toolCallId, original.toolName]);
	});

	it("never changes how a message already sent is sent: each call's messages extend the call before's", () => {
		const steps = [user("watch the job until it ends"), ...steeredPolls()];
		let sent: string[] = [];
		for (let length = 1; length <= steps.length; length++) {
			const next = bytes(coalesceGoalContinuations(steps.slice(0, length)));
			expect(next.slice(0, sent.length)).toEqual(sent);
			sent = next;
		}
	});

	it("distinct results, and a result after steering or a notice, are sent whole", () => {
		const messages = steeredPolls();
		// 2 is 1 again (only ids and times differ); 4 is 3 again; the steering and the notice keep 5 and 6 whole.
		expect(resultTexts(coalesceGoalContinuations(messages))).toEqual([
			running(1),
			SAME_POLL_RESULT,
			FINISHED,
			SAME_POLL_RESULT,
			FINISHED,
			FINISHED,
		]);
	});

	it("sends a repeated result no longer than the marker as it is", () => {
		const short = "job running";
		const messages = [...poll(1, short), ...poll(2, short), prompt(3)];
		expect(coalesceGoalContinuations(messages)).toBe(messages);
		expect(SAME_POLL_RESULT.length).toBeLessThan(FINISHED.length);
	});

	it("leaves a context with nothing repeated as the very same list", () => {
		const plain = [user("go"), said("done")];
		expect(coalesceGoalContinuations(plain)).toBe(plain);
		const one = [user("go"), ...poll(1, running(1)), prompt(2)];
		expect(coalesceGoalContinuations(one)).toBe(one);
		const distinct = [...poll(1, "a"), ...poll(2, "b"), prompt(3)];
		expect(coalesceGoalContinuations(distinct)).toBe(distinct);
		const idle = (n: number) => [prompt(n), said(`Waiting; ${n * 5} min elapsed.`)];
		const talk = [...idle(1), ...idle(2), ...idle(3), prompt(4)];
		expect(coalesceGoalContinuations(talk)).toBe(talk);
	});

	it("normalizes observation ids, UUIDs, clock times and elapsed values, but not counts or progress", () => {
		expect(normalizePoll(running(3))).toBe(normalizePoll(running(17)));
		expect(normalizePoll('<prime_context_output id="obs_000123" bytes="812" lines="9">')).toBe(
			normalizePoll('<prime_context_output id="obs_000124" bytes="815" lines="9">'),
		);
		expect(normalizePoll("took 1.5 s; duration=42; 00:01:07 left")).toBe(
			normalizePoll("took 2 s; duration=7; 00:00:59 left"),
		);
		expect(normalizePoll("progress 40%, 12 of 30 files")).not.toBe(normalizePoll("progress 45%, 13 of 30 files"));
		expect(normalizePoll("3 failed, 9 passed")).not.toBe(normalizePoll("2 failed, 10 passed"));
		expect(normalizePoll("src/a.py:12:34: E501 line too long")).not.toBe(
			normalizePoll("src/a.py:15:10: E501 line too long"),
		);
	});
});

/** Seven polls, two pairs of them equal, with a user's steering and a notice between the later ones. */
function steeredPolls(): AgentMessage[] {
	return [
		...poll(1, running(1)),
		...poll(2, running(2)),
		...poll(3, FINISHED),
		...poll(4, FINISHED),
		user("also check the log for warnings"),
		...poll(5, FINISHED),
		note("rlm_notice", "sub-agent reviewer completed"),
		...poll(6, FINISHED),
		prompt(7),
	];
}
