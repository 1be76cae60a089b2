import type { AgentMessage } from "@mariozechner/pi-agent-core";
import { EMPTY_TASK } from "prime-agent-context";
import { describe, expect, it } from "vitest";
import type { SessionEntry } from "../../session/index.js";
import { taskText, trimKernelNotices } from "./context-view.js";

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
	it("keeps only the newest notice and replaces a long inventory with the count and a globals() hint", () => {
		const messages = [note("kernel_fresh", "[old note]"), user("go"), note("ipython_state", inventory(45))];
		const trimmed = trimKernelNotices(messages);
		expect(trimmed.map((message) => message.role)).toEqual(["user", "host"]);
		const text = (trimmed[1] as { content: string }).content;
		expect(text).toContain("45 names are defined; look one up with `globals().get('name')`");
		expect(text).not.toContain("name_44");
		expect(text.startsWith("<ipython_state>")).toBe(true);
	});

	it("counts the names an inventory left out ('and N more')", () => {
		const text = inventory(3).replace("name_2 (int)", "name_2 (int), and 1,200 more (`dir()` lists them all)");
		const trimmed = trimKernelNotices([note("ipython_state", text)]);
		expect((trimmed[0] as { content: string }).content).toContain("1203 names are defined");
	});

	it("leaves a single short notice alone and returns the very same list", () => {
		const messages = [user("go"), note("ipython_state", inventory(5))];
		expect(trimKernelNotices(messages)).toBe(messages);
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
