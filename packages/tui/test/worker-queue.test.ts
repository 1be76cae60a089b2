import { PassThrough } from "node:stream";
import {
	type DaemonWorld,
	eventually,
	makeDaemonWorld,
	roles,
	sessionRecords,
} from "prime-agent-test-support/daemon-world";
import type { ScriptedReply } from "prime-agent-test-support/loopback-servers";
import { afterEach, describe, expect, it } from "vitest";
import { runAttach } from "../../agent/src/daemon/index.js";
import { screen, submit, type, waitFor } from "./virtual-terminal.js";
import { agent, attachView, count, io, leaveViews, startView, type View } from "./worker-views.js";

let world: DaemonWorld | undefined;

afterEach(async () => {
	await leaveViews();
	await world?.teardown();
	world = undefined;
});

/** A cell that runs until the test writes `release` into the project (no timing involved). */
const WAITING_CELL =
	"import os, time\nprint('waiting for release', flush=True)\nwhile not os.path.exists('release'): time.sleep(0.05)\nprint('released')";

const STEER = "also check y";
const FOLLOW_UP = "then write it up";
const COMMAND = "/heartbeat 1h check the build";
/** What `/heartbeat 1h` answers (its next time follows). */
const HEARTBEAT_SET = "Heartbeat every 1h, next at";

/** The model's calls: the cell, the answer after it (steering read), the answer to the follow-up. */
const SCRIPT: ScriptedReply[] = [{ code: WAITING_CELL }, { text: "Cell done." }, { text: "Follow-up done." }];

async function world_(script: ScriptedReply[]): Promise<DaemonWorld> {
	world = await makeDaemonWorld(script);
	return world;
}

/** In `view`, start the waiting cell and, while it runs, queue `what` (steering, a follow-up, a command). */
async function queueWhileWaiting(view: View, what: ("steer" | "follow_up" | "command")[]): Promise<void> {
	submit(view.terminal, "run the waiting job");
	await waitFor(view.app, "│ waiting for release", 60_000);
	for (const kind of what) {
		if (kind === "steer") submit(view.terminal, STEER);
		if (kind === "follow_up") {
			type(view.terminal, FOLLOW_UP);
			view.terminal.send("\x1b\r");
		}
		if (kind === "command") submit(view.terminal, COMMAND);
		// Each reaches the worker before the next is typed: the queue's order is the typing order.
		await waitFor(view.app, `${what.indexOf(kind) + 1} queued`, 30_000);
	}
}

/** The queued items as a view lists them above the editor, in order. */
const LISTED = [
	`› ${STEER}\n  queued: the agent reads it after the current step`,
	`› ${FOLLOW_UP}\n  queued: after this turn`,
	`› ${COMMAND}\n  queued: runs when the turn ends`,
];

/** The session's user messages and answers, in order. */
function conversation(path: string): string[] {
	return sessionRecords(path)
		.filter((record) => record.type === "message")
		.map((record) => {
			const message = record.message as { role: string; content: unknown };
			const text = JSON.stringify(message.content);
			return `${message.role}: ${[STEER, FOLLOW_UP, "run the waiting job", "Cell done.", "Follow-up done."].find((known) => text.includes(known)) ?? ""}`;
		});
}

describe("what a user queues while the agent works is held by the worker", () => {
	it("a second view lists another view's queue; after that view detaches, attach lists it and it runs when the turn ends", async () => {
		const current = await world_(SCRIPT);
		const first = await startView(current);
		const key = first.app.link.agentKey as string;
		const second = await attachView(current, key);
		await waitFor(second.app, "● ready");
		await queueWhileWaiting(first, ["steer", "follow_up", "command"]);
		expect(screen(first.app)).toContain("/heartbeat runs when the turn ends.");
		// The other view lists all three, as the worker holds them.
		const seen = await waitFor(second.app, (text) => LISTED.every((item) => text.includes(item)), 30_000);
		expect(seen).toContain("· 3 queued");
		// The view that queued them leaves (Ctrl-D): nothing it queued goes with it.
		first.terminal.send("\x04");
		expect((await first.done).code).toBe(0);
		const third = await attachView(current, key);
		const attached = await waitFor(third.app, (text) => LISTED.every((item) => text.includes(item)), 30_000);
		expect(attached).toContain("· 3 queued");
		expect(count(attached, `› ${COMMAND}`)).toBe(1);
		current.writeProject("release", "");
		for (const view of [second, third]) {
			const after = await waitFor(view.app, (text) => text.includes(HEARTBEAT_SET) && text.includes("● ready"), 60_000);
			expect(after).not.toContain("queued");
			// Read by the turn: each message shows once, where the model read it; the command ran after the turn.
			expect(count(after, `› ${STEER}`)).toBe(1);
			expect(count(after, `› ${FOLLOW_UP}`)).toBe(1);
			expect(count(after, HEARTBEAT_SET)).toBe(1);
			expect(after.indexOf("released")).toBeLessThan(after.indexOf(`› ${STEER}`));
			expect(after.indexOf("Follow-up done.")).toBeLessThan(after.indexOf(HEARTBEAT_SET));
		}
		const info = await agent(current, key);
		expect(info.heartbeat).toBe("3600s");
		expect(conversation(info.sessionPath as string)).toEqual([
			"user: run the waiting job",
			"assistant: ",
			"toolResult: ",
			`user: ${STEER}`,
			"assistant: Cell done.",
			`user: ${FOLLOW_UP}`,
			"assistant: Follow-up done.",
		]);
		expect(current.server.requests).toHaveLength(3);
	});

	it("what was queued runs when the turn ends with no view attached; the line chat's attach lists it first", async () => {
		const current = await world_(SCRIPT);
		const first = await startView(current);
		const key = first.app.link.agentKey as string;
		await queueWhileWaiting(first, ["follow_up", "command"]);
		first.terminal.send("\x04");
		expect((await first.done).code).toBe(0);
		// `prime-agent attach` without the terminal UI: the line chat says what waits, then detaches.
		const stdin = new PassThrough();
		const stderr = new PassThrough();
		let said = "";
		stderr.on("data", (chunk) => {
			said += String(chunk);
		});
		const chat = runAttach(key, { ...io(current), stdin, stdout: new PassThrough(), stderr });
		await eventually("the line chat to start", () => said.includes("Type a message"), 30_000);
		stdin.end("/exit\n");
		expect(await chat).toBe(0);
		expect(said).toContain(
			`Queued (2):\n  ${FOLLOW_UP}  (after this turn)\n  ${COMMAND}  (when the turn ends)\nType a message`,
		);
		expect((await agent(current, key)).clients).toBe(0);
		current.writeProject("release", "");
		const idle = await eventually(
			"the turn and the queued command to end",
			async () => {
				const info = await agent(current, key);
				return info.state === "idle" && info.heartbeat ? info : undefined;
			},
			60_000,
		);
		expect(idle.heartbeat).toBe("3600s");
		expect(idle.clients).toBe(0);
		expect(roles(sessionRecords(idle.sessionPath as string)).filter((role) => role === "user")).toHaveLength(2);
		expect(conversation(idle.sessionPath as string).slice(-2)).toEqual([
			`user: ${FOLLOW_UP}`,
			"assistant: Follow-up done.",
		]);
		// Nothing waits any more: a view attached now lists nothing.
		const later = await attachView(current, key);
		const shown = await waitFor(later.app, "Follow-up done.", 30_000);
		expect(shown).not.toContain("queued");
		expect(later.app.link.status().queued).toEqual([]);
	});

	it("a queued command that fails says why in every view, the queuing one gone; the next queued still runs", async () => {
		const current = await world_([{ code: WAITING_CELL }, { text: "Cell done." }]);
		const first = await startView(current);
		const key = first.app.link.agentKey as string;
		const second = await attachView(current, key);
		await waitFor(second.app, "● ready");
		submit(first.terminal, "run the waiting job");
		await waitFor(first.app, "│ waiting for release", 60_000);
		submit(first.terminal, "/heartbeat 5s");
		await waitFor(first.app, "1 queued", 30_000);
		submit(first.terminal, COMMAND);
		await waitFor(second.app, "2 queued", 30_000);
		first.terminal.send("\x04");
		expect((await first.done).code).toBe(0);
		current.writeProject("release", "");
		const refused = "The command /heartbeat failed: A heartbeat of 5s is too frequent: the shortest interval is 10s.";
		const screenText = await waitFor(
			second.app,
			(text) => text.includes(HEARTBEAT_SET) && text.includes("● ready"),
			60_000,
		);
		expect(screenText).not.toContain("queued");
		// The note wraps at 80 columns: compared as one line.
		const after = screenText.replace(/\s+/g, " ");
		expect(count(after, refused)).toBe(1);
		expect(after.indexOf("Cell done.")).toBeLessThan(after.indexOf(refused));
		expect(after.indexOf(refused)).toBeLessThan(after.indexOf(HEARTBEAT_SET));
		expect((await agent(current, key)).heartbeat).toBe("3600s");
	});
});
