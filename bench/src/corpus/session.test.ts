import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { listTrajectoryFiles, readTrajectory } from "./files.js";
import { parseSession } from "./session.js";

const scratch = await mkdtemp(join(tmpdir(), "bench-session-"));
afterAll(() => rm(scratch, { recursive: true, force: true }));

const at = "2026-01-01T00:00:00.000Z";
const call = (id: string, code: string) => ({ type: "toolCall", id, name: "ipython", arguments: { code } });
const result = (id: string, text: string, isError = false) => ({
	role: "toolResult",
	toolCallId: id,
	toolName: "ipython",
	content: [{ type: "text", text }],
	isError,
	timestamp: 0,
});
const entry = (id: string, parentId: string | null, message: unknown) => ({
	type: "message",
	id,
	parentId,
	timestamp: at,
	message,
});

/** A session in the agent's documented format, with an abandoned branch (b1) and two calls in one turn. */
const session = [
	{ type: "session", version: 1, id: "sess-1", timestamp: at, cwd: "/project" },
	{ type: "model_change", id: "m", parentId: null, timestamp: at, provider: "p", modelId: "x" },
	entry("u1", "m", { role: "user", content: "Fix the failing test.", timestamp: 0 }),
	entry("a1", "u1", { role: "assistant", content: [{ type: "text", text: "Run it." }, call("c1", "!pytest")] }),
	entry("r1", "a1", result("c1", "1 failed, 3 passed", true)),
	entry("b1", "r1", { role: "assistant", content: [call("cx", "abandoned()")] }),
	entry("b2", "b1", result("cx", "never replayed")),
	{
		type: "custom_message",
		id: "h1",
		parentId: "r1",
		timestamp: at,
		customType: "note",
		content: "hint",
		display: false,
	},
	entry("a2", "h1", { role: "assistant", content: [call("c2", "print(1)"), call("c3", "print(2)")] }),
	entry("r2", "a2", result("c2", "1")),
	entry("r3", "r2", result("c3", "2")),
	entry("a3", "r3", { role: "assistant", content: [{ type: "text", text: "Done." }] }),
]
	.map((line) => JSON.stringify(line))
	.join("\n");

describe("agent session reader", () => {
	it("replays the branch ending at the last entry, each tool result with its call", () => {
		const run = parseSession(session, "fallback");
		expect(run.id).toBe("sess-1");
		expect(run.task).toBe("Fix the failing test.");
		expect(run.steps.map((step) => [step.command, step.observation, step.isError, step.tool])).toEqual([
			["!pytest", "1 failed, 3 passed", true, "ipython"],
			["print(1)", "1", false, "ipython"],
			["print(2)", "2", false, "ipython"],
		]);
		expect(run.steps[1].assistant).toContain("hint");
		expect(run.steps[2].assistant).toBe("");
		expect(run.trailing).toEqual(["Done."]);
	});

	it("is read from a .jsonl file beside trajectories", async () => {
		const path = join(scratch, "sess-1.jsonl");
		await writeFile(path, `${session}\n`);
		expect(await listTrajectoryFiles(scratch)).toEqual([path]);
		expect((await readTrajectory(path)).steps).toHaveLength(3);
	});

	it("names the line of a damaged session", () => {
		expect(() => parseSession('{"type":"session","id":"s"}\n{oops', "s")).toThrow(/line 2: not JSON/);
	});
});
