import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
	type DaemonWorld,
	eventually,
	killDaemon,
	makeDaemonWorld,
	roles,
	sessionRecords,
} from "prime-agent-test-support/daemon-world";
import type { ScriptedReply } from "prime-agent-test-support/loopback-servers";
import { cannotMount, mountSmallDisk, type SmallDisk } from "prime-agent-test-support/small-disk";
import { afterEach, describe, expect, it } from "vitest";
import { daemonPaths, readWorkerRecord } from "../../agent/src/daemon/index.js";
import { lastStatusWritten, screen, statusOf, submit, visible, waitFor } from "./virtual-terminal.js";
import { agent, ask, attachView, count, leaveViews, startView, viewAfterHello } from "./worker-views.js";

let world: DaemonWorld | undefined;
/** A small tmpfs mounted over the world's agent home (the full-disk test). */
let disk: SmallDisk | undefined;

afterEach(async () => {
	await leaveViews();
	if (disk && world) killDaemon(world.home);
	disk?.unmount();
	disk = undefined;
	await world?.teardown();
	world = undefined;
});

const SLOW_CELL = "import time\nprint('step one', flush=True)\ntime.sleep(4)\nprint('step two')";

async function world_(script: ScriptedReply[]): Promise<DaemonWorld> {
	world = await makeDaemonWorld(script);
	return world;
}

describe("the terminal UI as a view of a background worker", () => {
	it("leaving detaches: the turn goes on in the worker, and attach shows what happened meanwhile", async () => {
		const current = await world_([{ code: SLOW_CELL }, { text: "All done." }]);
		const first = await startView(current);
		const key = first.app.link.agentKey as string;
		expect(key).toMatch(/^[0-9a-f]{8}$/);
		// The header names the agent (wrapped at 80 columns).
		await waitFor(first.app, (text) => text.replace(/\s+/g, " ").includes(`· agent ${key}`));
		submit(first.terminal, "run the slow job");
		await waitFor(first.app, "step one");
		first.terminal.send("\x04");
		const left = await first.done;
		expect(left.code).toBe(0);
		expect(left.said).toBe(
			`Detached from agent ${key}; it keeps running. \`prime-agent attach ${key}\` comes back, \`prime-agent shutdown ${key}\` stops it.`,
		);
		const detached = await agent(current, key);
		expect(detached.state).toBe("running");
		expect(detached.clients).toBe(0);
		const idle = await eventually("the turn to end", async () => {
			const info = await agent(current, key);
			return info.state === "idle" ? info : undefined;
		});
		expect(roles(sessionRecords(idle.sessionPath as string))).toEqual([
			"session",
			"model_change",
			"user",
			"assistant",
			"toolResult",
			"assistant",
		]);
		const second = await attachView(current, key);
		const shown = await waitFor(second.app, "All done.");
		expect(shown).toContain(`Attached to agent ${key}.`);
		expect(shown).toContain("› run the slow job");
		expect(shown).toContain("step two");
		expect(shown).toContain("● ready");
		second.terminal.send("\x04");
		expect((await second.done).code).toBe(0);
	});

	it("a view attached mid-cell shows the cell running, then its result and the answer as they come", async () => {
		const current = await world_([
			{ code: "import time\ntime.sleep(5)\nprint('late result')" },
			{ text: "Finished after the wait." },
		]);
		const first = await startView(current);
		const key = first.app.link.agentKey as string;
		submit(first.terminal, "wait a while");
		await waitFor(first.app, "running (Esc interrupts)");
		first.terminal.send("\x04");
		await first.done;
		const second = await attachView(current, key);
		const during = await waitFor(second.app, "running (Esc interrupts)");
		expect(during).toContain("● working");
		const after = await waitFor(second.app, "Finished after the wait.");
		expect(after).toContain("late result");
		expect(after).not.toContain("running (Esc interrupts)");
		const ready = await waitFor(second.app, "● ready");
		// Nothing drawn twice: the history read on attaching and the events meanwhile overlap.
		expect(count(ready, "› wait a while")).toBe(1);
		expect(count(ready, "Finished after the wait.")).toBe(1);
		expect(count(ready, "import time")).toBe(1);
	});

	it("two views of one worker: each sees the other's prompt and the answer once, as they happen", async () => {
		const current = await world_([{ text: "Answer for the first view." }, { text: "Answer for the second view." }]);
		const first = await startView(current);
		const key = first.app.link.agentKey as string;
		const second = await attachView(current, key);
		await waitFor(second.app, "● ready");
		submit(first.terminal, "question from the first view");
		const seen = await waitFor(second.app, "Answer for the first view.");
		expect(count(seen, "› question from the first view")).toBe(1);
		await waitFor(second.app, "● ready");
		submit(second.terminal, "question from the second view");
		const both = await waitFor(first.app, "Answer for the second view.");
		await waitFor(first.app, "● ready");
		for (const text of [
			"› question from the first view",
			"Answer for the first view.",
			"› question from the second view",
			"Answer for the second view.",
		])
			expect(count(screen(first.app), text)).toBe(1);
		expect(both.indexOf("Answer for the first view.")).toBeLessThan(both.indexOf("› question from the second view"));
		expect((await agent(current, key)).clients).toBe(2);
	});

	it("Ctrl-C interrupts the worker's cell (the kernel keeps its variables); a stubborn cell asks this view", async () => {
		const current = await world_([
			{ code: "x = 41\nimport time\nprint('sleeping', flush=True)\ntime.sleep(60)" },
			{ code: "print('x is', x + 1)" },
			{ text: "Interrupted and carried on." },
			{
				code: "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('ignoring', flush=True)\ntime.sleep(60)",
			},
			{ text: "The kernel was restarted." },
		]);
		const view = await startView(current);
		submit(view.terminal, "sleep long");
		// Pressed once the cell runs (an interrupt before it starts cancels it outright).
		await waitFor(view.app, "│ sleeping");
		view.terminal.send("\x03");
		await waitFor(view.app, "Interrupting the running cell; Ctrl-C again stops the turn.");
		const carried = await waitFor(view.app, "Interrupted and carried on.");
		expect(carried).toContain("x is 42");
		submit(view.terminal, "stubborn");
		await waitFor(view.app, "│ ignoring");
		view.terminal.send("\x03");
		await waitFor(view.app, () =>
			visible(view.terminal.written).includes("The cell ignored the interrupt and is still running"),
		);
		view.terminal.send("\x1b[B");
		view.terminal.send("\r");
		const restarted = await waitFor(view.app, "The kernel was restarted.");
		expect(restarted).toContain("kernel restarted");
	});

	it("/tree and /model work on the worker's session; /model starts the same agent again on the new model", async () => {
		const current = await world_([
			{ text: "first answer" },
			{ text: "second answer" },
			{ text: "on the second model" },
		]);
		current.writeHome("models.json", {
			providers: { local: { baseUrl: current.server.baseUrl, models: [{ id: "coder" }, { id: "coder-2" }] } },
		});
		const view = await startView(current);
		const firstKey = view.app.link.agentKey as string;
		await ask(view, "first question", "first answer");
		await ask(view, "second question", "second answer");
		submit(view.terminal, "/tree");
		await waitFor(view.app, () => visible(view.terminal.written).includes("Session tree"));
		view.terminal.send("\x1b[A");
		view.terminal.send("\r");
		await waitFor(view.app, "Back before that message");
		expect(view.app.editor.getText()).toBe("second question");
		expect(screen(view.app)).not.toContain("second answer");
		const path = view.app.link.status().session.path;
		view.app.editor.setText("");
		submit(view.terminal, "/model local/coder-2");
		// The worker stops (saving its kernel) and starts again: slower than a keypress on a loaded machine.
		await waitFor(view.app, "Model: local/coder-2", 45_000);
		expect(view.app.link.agentKey).toBe(firstKey);
		expect(view.app.link.status().session.path).toBe(path);
		expect(view.app.link.status().model.id).toBe("coder-2");
		// One agent for the session, not one per model.
		expect((await current.agents()).map((info) => [info.key, info.state])).toEqual([[firstKey, "idle"]]);
		view.app.editor.setText("again");
		view.terminal.send("\r");
		await waitFor(view.app, "on the second model");
		const records = sessionRecords(path);
		const users = records.filter(
			(record) => record.type === "message" && (record.message as { role: string }).role === "user",
		);
		expect(users).toHaveLength(3);
		// "again" continues where /tree moved the conversation: after the model change, a sibling of "second question".
		const before = records.find((record) => record.id === users[2]?.parentId);
		expect(before?.type).toBe("model_change");
		expect(before?.parentId).toBe(users[1]?.parentId);
	});

	it("a worker killed mid-run is followed to the one the supervisor restarts; the view goes on there", async () => {
		const current = await world_([
			{ code: "import time\nprint('before the crash', flush=True)\ntime.sleep(60)" },
			{ text: "Back after the restart." },
		]);
		const view = await startView(current);
		const key = view.app.link.agentKey as string;
		submit(view.terminal, "long job");
		await waitFor(view.app, "│ before the crash");
		const pid = readWorkerRecord(daemonPaths(current.home), key)?.pid as number;
		process.kill(pid, "SIGKILL");
		await waitFor(view.app, "The agent's worker stopped during this run");
		const back = await waitFor(view.app, `Reconnected to agent ${key} after its worker restarted`);
		expect(back).toContain("› long job");
		// The cell keeps what it printed before the crash, and says what happened (the session recorded it).
		expect(back).toContain("✗ cut off");
		expect(back).toContain("│ before the crash");
		expect(back).toContain("│ [the cell did not finish: the agent process running this session stopped");
		expect(back).not.toContain("(no output)");
		expect(readWorkerRecord(daemonPaths(current.home), key)?.pid).not.toBe(pid);
		await waitFor(view.app, "● ready");
		submit(view.terminal, "are you there?");
		await waitFor(view.app, "Back after the restart.");
		expect((await agent(current, key)).crashes).toBe(1);
	});

	it("what an extension prints with console in the worker shows as a note in the view", async () => {
		const current = await world_([]);
		current.writeProject(
			"noisy.mjs",
			'export default function (api) {\n\tapi.registerCommand("noisy", { handler: () => { console.log("count:", 3); console.error("oops"); } });\n}\n',
		);
		const view = await startView(current, { extensionPaths: ["noisy.mjs"] });
		submit(view.terminal, "/noisy ");
		const said = await waitFor(view.app, "oops");
		expect(said).toContain("\n count: 3\n\n oops\n");
	});

	it("while the view waits for a restarted worker, a prompt is refused with a note and Ctrl-D leaves at once", async () => {
		const current = await world_([{ text: "hello" }]);
		const { view, pid } = await viewAfterHello(current);
		process.kill(pid, "SIGKILL");
		await waitFor(view.app, "stopped unexpectedly");
		submit(view.terminal, "typed during the restart");
		await waitFor(view.app, "The agent's worker is restarting after it stopped unexpectedly.");
		expect(view.app.working).toBe(false);
		// Never sent: the text is back in the editor, to send again once reconnected.
		expect(view.app.editor.getText()).toBe("typed during the restart");
		view.app.editor.setText("");
		view.terminal.send("\x04");
		const left = await view.done;
		expect(left.code).toBe(0);
	});

	it("with two views: /tree in one redraws the other, a question answered in one closes in the other, /new leaves the worker to the other", async () => {
		const current = await world_([
			{ text: "first answer" },
			{ text: "second answer" },
			{
				code: "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('ignoring', flush=True)\ntime.sleep(60)",
			},
			{ text: "Restarted." },
		]);
		const first = await startView(current);
		const key = first.app.link.agentKey as string;
		await ask(first, "first question", "first answer");
		await ask(first, "second question", "second answer");
		const second = await attachView(current, key);
		await waitFor(second.app, "second answer");
		// The first view goes back before "second question": the second lays the conversation out again.
		submit(first.terminal, "/tree");
		await waitFor(first.app, () => visible(first.terminal.written).includes("Session tree"));
		first.terminal.send("\x1b[A");
		first.terminal.send("\r");
		await waitFor(first.app, "Back before that message");
		const moved = await waitFor(second.app, "Another view moved the conversation to another entry.");
		expect(moved).not.toContain("second answer");
		// A stubborn cell asks both views; answered in the first, the question closes in the second.
		first.app.editor.setText("");
		submit(first.terminal, "stubborn");
		await waitFor(first.app, "│ ignoring");
		first.terminal.send("\x03");
		const asked = "The cell ignored the interrupt and is still running";
		await waitFor(second.app, () => second.app.showingPanel);
		await waitFor(first.app, () => first.app.showingPanel);
		// Drawn on the next frame.
		await waitFor(second.app, () => visible(second.terminal.written).includes(asked));
		first.terminal.send("\x1b[B");
		first.terminal.send("\r");
		await waitFor(second.app, () => !second.app.showingPanel);
		await waitFor(second.app, "Restarted.");
		await waitFor(first.app, "● ready");
		// /new in the first view: the worker stays for the second view.
		submit(first.terminal, "/new");
		await waitFor(first.app, (text) => !text.includes("first question") && text.includes("● ready"), 30_000);
		expect(first.app.link.agentKey).not.toBe(key);
		const stayed = await eventually("the first view to have left the agent", async () => {
			const info = await agent(current, key);
			return info.clients === 1 && info.state === "idle" ? info : undefined;
		});
		expect(stayed.pid).toBeGreaterThan(0);
		expect(second.app.link.status().session.id).not.toBe(first.app.link.status().session.id);
	});

	it("/model in one view: the other view follows the agent to its new model; one worker serves the session", async () => {
		const current = await world_([{ text: "hello" }, { text: "from the second model" }]);
		current.writeHome("models.json", {
			providers: { local: { baseUrl: current.server.baseUrl, models: [{ id: "coder" }, { id: "coder-2" }] } },
		});
		const first = await startView(current);
		const key = first.app.link.agentKey as string;
		submit(first.terminal, "hi");
		await waitFor(first.app, "hello");
		await waitFor(first.app, "● ready");
		const second = await attachView(current, key);
		await waitFor(second.app, "● ready");
		first.app.editor.setText("");
		submit(first.terminal, "/model local/coder-2");
		await waitFor(first.app, "Model: local/coder-2", 45_000);
		await waitFor(second.app, `Reconnected to agent ${key}`, 45_000);
		expect(second.app.link.status().model.id).toBe("coder-2");
		submit(second.terminal, "and now?");
		await waitFor(second.app, "from the second model");
		expect((await current.agents()).map((info) => [info.key, info.clients])).toEqual([[key, 2]]);
	});

	it("/tree whose request is cut by the worker's death says so in a note", async () => {
		const current = await world_([{ text: "hello" }]);
		const { view, key, pid } = await viewAfterHello(current);
		// Stopped first, so the request is under way when the worker dies.
		process.kill(pid, "SIGSTOP");
		submit(view.terminal, "/tree");
		process.kill(pid, "SIGKILL");
		// The note shows until the view, reconnected, lays the conversation out again (vitest fails the
		// test on an unhandled rejection, the defect this guards against).
		await waitFor(view.app, () => visible(view.terminal.written).includes("The session tree could not be read:"));
		await waitFor(view.app, `Reconnected to agent ${key}`);
	});

	it("a worker stopped from elsewhere ends the view, saying how to come back", async () => {
		const current = await world_([{ text: "hello" }]);
		const { view, key } = await viewAfterHello(current);
		const stopped = await current.cli(["shutdown", key]);
		expect(stopped.code).toBe(0);
		const left = await view.done;
		expect(left.code).toBe(1);
		expect(left.message).toBe(
			`The agent's worker stopped (it was shut down). \`prime-agent agents\` shows its state; \`prime-agent attach ${key}\` continues the session.`,
		);
		expect(left.said).toBe("");
		expect((await agent(current, key)).state).toBe("saved");
	});

	it("`prime-agent shutdown` mid-cell: the last status line the view draws says the session stopped", {
		timeout: 120_000,
	}, async () => {
		const current = await world_([{ code: "import time\nprint('working', flush=True)\ntime.sleep(120)" }]);
		const view = await startView(current);
		submit(view.terminal, "run it");
		const busy = await waitFor(
			view.app,
			(text) => text.includes("│ working") && statusOf(text).includes("kernel busy"),
			60_000,
		);
		expect(statusOf(busy)).toMatch(/^● working │ kernel busy · local\/coder · /);
		const stopped = await current.cli(["shutdown"]);
		expect(stopped.stdout).toBe("Stopped every agent and the daemon.\n");
		expect((await view.done).code).toBe(1);
		expect(lastStatusWritten(view.terminal)).toMatch(/^● stopped │ kernel stopped · local\/coder · /);
	});

	it("after 'Wait for it' the view's status line says the kernel is busy until the left cell ends", {
		timeout: 120_000,
	}, async () => {
		// The cell waits for a file in the world's project: the script is filled in once the world exists.
		const script: ScriptedReply[] = [{ code: "" }, { text: "Left it running." }];
		const current = await world_(script);
		const release = join(current.project, "release");
		script[0] = {
			code: `import os, signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('ignoring', flush=True)\nwhile not os.path.exists(${JSON.stringify(release)}):\n    time.sleep(0.05)`,
		};
		const view = await startView(current);
		submit(view.terminal, "stubborn");
		await waitFor(view.app, "│ ignoring", 60_000);
		view.terminal.send("\x03");
		await waitFor(
			view.app,
			() => visible(view.terminal.written).includes("The cell ignored the interrupt and is still running"),
			60_000,
		);
		view.terminal.send("\r");
		const waiting = await waitFor(
			view.app,
			(text) => text.includes("Left it running.") && text.includes("● ready"),
			60_000,
		);
		expect(statusOf(waiting)).toMatch(/^● ready │ kernel busy · local\/coder · /);
		const key = view.app.link.agentKey as string;
		// `prime-agent status` and `agents` count the cell as work.
		await eventually("the agent to read as running", async () => (await agent(current, key)).state === "running");
		writeFileSync(release, "");
		const ended = await waitFor(view.app, (text) => statusOf(text).includes("kernel idle"), 60_000);
		expect(statusOf(ended)).toMatch(/^● ready │ kernel idle · local\/coder · /);
		await eventually("the agent to read as idle", async () => (await agent(current, key)).state === "idle");
	});
});

describe.skipIf(cannotMount !== undefined)(
	`a view on a full disk${cannotMount ? ` (skipped: ${cannotMount})` : ""}`,
	() => {
		it("a worker that dies while the agent home's disk is full ends the view at once with the disk's reason, not after a 30 s wait", async () => {
			const current = await world_([{ text: "hello" }]);
			disk = mountSmallDisk(current.home);
			const { view, key, pid } = await viewAfterHello(current);
			disk.fill();
			const killed = Date.now();
			process.kill(pid, "SIGKILL");
			const left = await view.done;
			expect(Date.now() - killed).toBeLessThan(10_000);
			expect(left.code).toBe(1);
			const home = current.home;
			expect(left.message).toBe(
				`The agent's worker stopped (No space left on ${home} (tmpfs, 0 bytes free): ${home}/daemon/workers/${key}/worker.json could not be written. Free space on ${home}, then \`prime-agent attach ${key}\` starts it again.). \`prime-agent agents\` shows its state; \`prime-agent attach ${key}\` continues the session.`,
			);
		});

		it("with the supervisor gone too, the view says at once that none can start on the full disk", async () => {
			const current = await world_([{ text: "hello" }]);
			disk = mountSmallDisk(current.home);
			const { view, key, pid } = await viewAfterHello(current);
			const supervisor = JSON.parse(readFileSync(daemonPaths(current.home).supervisor, "utf8")) as { pid: number };
			disk.fill();
			process.kill(supervisor.pid, "SIGKILL");
			const killed = Date.now();
			process.kill(pid, "SIGKILL");
			const left = await view.done;
			expect(Date.now() - killed).toBeLessThan(10_000);
			const home = current.home;
			expect(left.message).toBe(
				`The agent's worker stopped (No space left on ${home} (tmpfs, 0 bytes free): ${home}/daemon/supervisor.json could not be written. Free space on ${home}, then run the command again.). \`prime-agent agents\` shows its state; \`prime-agent attach ${key}\` continues the session.`,
			);
		});
	},
);
