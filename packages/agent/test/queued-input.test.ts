import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Context, fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { eventually } from "prime-agent-test-support/daemon-world";
import { useFauxSessions } from "prime-agent-test-support/faux-session";
import { describe, expect, it } from "vitest";
import { type LocalLink, localLink, type SessionEvent } from "../src/link/index.js";
import type { StartedSession } from "../src/startup/index.js";

const sessions = useFauxSessions();

/** A cell that runs until the test writes `release` into the project (no timing involved). */
function waitingCell(project: string): string {
	const release = JSON.stringify(join(project, "release"));
	return `import os, time\nprint('waiting', flush=True)\nwhile not os.path.exists(${release}): time.sleep(0.05)\nprint('released')`;
}

/** A session whose first prompt runs `waitingCell`, driven through its link; resolves once the cell runs. */
async function linkWithCellWaiting(after: Parameters<typeof sessions.faux.setResponses>[0]) {
	const started: StartedSession = await sessions.start();
	const project = started.session.cwd;
	sessions.faux.setResponses([fauxAssistantMessage(fauxToolCall("ipython", { code: waitingCell(project) })), ...after]);
	const link: LocalLink = localLink(started);
	const events: SessionEvent[] = [];
	link.subscribe((event) => events.push(event));
	const first = link.prompt("run the waiting job");
	await eventually("the cell to run", () => events.some((event) => event.type === "tool_execution_update"));
	return { started, link, events, first, release: () => writeFileSync(join(project, "release"), "") };
}

function userTexts(started: StartedSession): string[] {
	return started.session
		.context()
		.messages.filter((message) => message.role === "user")
		.map((message) => JSON.stringify(message.content));
}

describe("what is queued while the agent works is held by the session", () => {
	it("steering, a follow-up and a command are listed until the turn reads or runs them, then run in order", async () => {
		const contexts: Context[] = [];
		const answer = (text: string) => (context: Context) => {
			contexts.push(context);
			return fauxAssistantMessage(text);
		};
		const { started, link, events, first, release } = await linkWithCellWaiting([
			answer("Cell done."),
			answer("Follow-up done."),
		]);
		await link.steer("also check y");
		await link.followUp("then write it up");
		await link.queue("/goal");
		expect(link.status().queued).toEqual([
			{ kind: "steer", text: "also check y" },
			{ kind: "follow_up", text: "then write it up" },
			{ kind: "prompt", text: "/goal" },
		]);
		expect(link.status().running).toBe(true);
		release();
		expect((await first).status).toBe("ok");
		const ended = await eventually("the queued command to run", () =>
			events.find(
				(event): event is Extract<SessionEvent, { type: "run_end" }> =>
					event.type === "run_end" && event.commandMessage !== undefined,
			),
		);
		expect(ended.commandMessage).toBe(
			"No goal. Set one with /goal <objective> (options: --tokens N, --turns N, --minutes N).",
		);
		expect(link.status().queued).toEqual([]);
		// The steering reached the call after the cell; the follow-up the call after the turn's answer.
		expect(contexts).toHaveLength(2);
		expect(JSON.stringify(contexts[0]?.messages.at(-1)?.content)).toContain("also check y");
		expect(JSON.stringify(contexts[1]?.messages.at(-1)?.content)).toContain("then write it up");
		expect(userTexts(started)).toHaveLength(3);
	});

	it("a session closed before its turn ends runs nothing that was queued, and lists nothing", async () => {
		const { started, link, first } = await linkWithCellWaiting([fauxAssistantMessage("never asked for")]);
		await link.queue("a second prompt");
		expect(link.status().queued).toEqual([{ kind: "prompt", text: "a second prompt" }]);
		await link.close();
		expect((await first).status).toBe("aborted");
		// Runs go one after another: this one starts only once the queued one has had its chance.
		expect(await link.inTurn("probe", async () => "ran")).toBeUndefined();
		expect(link.status().queued).toEqual([]);
		expect(userTexts(started)).toEqual([JSON.stringify([{ type: "text", text: "run the waiting job" }])]);
	});
});
