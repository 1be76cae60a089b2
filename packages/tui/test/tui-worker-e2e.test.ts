import { existsSync } from "node:fs";
import {
	type DaemonWorld,
	eventually,
	heldCell,
	makeDaemonWorld,
	releaseHeldCell,
	roles,
	sessionRecords,
} from "prime-agent-test-support/daemon-world";
import { afterEach, describe, expect, it, vi } from "vitest";
import { daemonPaths } from "../../agent/src/daemon/state.js";
import { startInTmux, type TmuxPane } from "./tmux.js";

// A supervisor, workers and kernels started for real: minutes on a loaded machine.
vi.setConfig({ testTimeout: 180_000 });

let world: DaemonWorld | undefined;
const panes: TmuxPane[] = [];

afterEach(async () => {
	for (const pane of panes.splice(0)) await pane.kill();
	await world?.teardown();
	world = undefined;
});

/** `prime-agent ...args` in an 80x24 tmux pane, its session in the daemon (no PRIME_AGENT_IN_PROCESS). */
function open(current: DaemonWorld, args: string[]): TmuxPane {
	const pane = startInTmux(args, { cwd: current.project, env: current.env });
	panes.push(pane);
	return pane;
}

/** The agent key the UI's header names (`· agent <key>`, perhaps wrapped). */
async function agentKey(pane: TmuxPane): Promise<string> {
	const screen = await pane.waitFor((text) => /· agent\s+[0-9a-f]{8}/.test(text));
	return (/· agent\s+([0-9a-f]{8})/.exec(screen) as RegExpExecArray)[1] as string;
}

/** Prints "step one", then "step two" once the test has released it. */
const SLOW_CELL = heldCell("step one", "step two");
const ONE_CELL_TURN = ["session", "model_change", "user", "assistant", "toolResult", "assistant"];

describe("prime-agent's terminal UI over a background worker (the real command line in tmux)", () => {
	it("Ctrl-D detaches while the turn goes on; `prime-agent attach` brings the UI back with everything", async () => {
		world = await makeDaemonWorld([{ code: SLOW_CELL }, { text: "All done." }]);
		const first = open(world, ["--model", "local/coder"]);
		const key = await agentKey(first);
		first.type("run the slow job");
		first.keys("Enter");
		await first.waitFor("│ step one");
		first.keys("C-d");
		await first.waitForExit(
			`Detached from agent ${key}; it keeps running. \`prime-agent attach ${key}\` comes back, \`prime-agent shutdown ${key}\` stops it.`,
		);
		const info = (await world.agents()).find((agent) => agent.key === key);
		expect(info?.state).toBe("running");
		releaseHeldCell(world);
		const second = open(world, ["attach", key]);
		const back = await second.waitFor("All done.");
		expect(back).toContain("› run the slow job");
		expect(back).toContain("step two");
		expect(back).toContain(`Attached to agent ${key}.`);
		second.keys("C-d");
		await second.waitFor(() => second.exited());
	});

	it("what is typed while the worker starts waits in the editor, and Enter sends it to the worker", async () => {
		world = await makeDaemonWorld([{ text: "Sent from the editor." }]);
		const pane = open(world, ["--model", "local/coder"]);
		pane.type("start the job");
		pane.keys("Enter");
		const screen = await pane.waitFor("Typed while starting: Enter sends it.");
		expect(screen).toMatch(/^ start the job$/m);
		expect(world.server.requests.length).toBe(0);
		pane.keys("Enter");
		const answered = await pane.waitFor("Sent from the editor.");
		expect(answered).toContain("› start the job");
		expect(world.server.requests.length).toBe(1);
	});

	it("Ctrl-C typed while the worker starts interrupts the start, as it does without keys held", async () => {
		world = await makeDaemonWorld([]);
		const pane = open(world, ["--model", "local/coder"]);
		// The supervisor is started once the command line holds the keys for the UI; its worker takes seconds more.
		const supervisor = daemonPaths(world.home).supervisor;
		await eventually("the command line to start the supervisor", () => existsSync(supervisor));
		pane.type("never mind");
		pane.keys("C-c");
		const left = await pane.waitFor(() => pane.exited());
		expect(left).not.toContain("kernel not started");
		expect(left).not.toContain("never mind");
	});

	it("closing the terminal mid-cell (SIGHUP) leaves the turn running in its worker to the end", async () => {
		world = await makeDaemonWorld([{ code: SLOW_CELL }, { text: "Finished without a terminal." }]);
		const pane = open(world, ["--model", "local/coder"]);
		const key = await agentKey(pane);
		pane.type("run the slow job");
		pane.keys("Enter");
		await pane.waitFor("│ step one");
		// Killing the tmux server hangs up the terminal: the UI's process gets SIGHUP.
		await pane.kill();
		// The view has gone mid-cell; the cell ends only now.
		releaseHeldCell(world);
		const current = world;
		const done = await eventually("the turn to end in the worker", async () => {
			const info = (await current.agents()).find((agent) => agent.key === key);
			return info?.state === "idle" ? info : undefined;
		});
		expect(done.clients).toBe(0);
		const records = sessionRecords(done.sessionPath as string);
		expect(roles(records)).toEqual(ONE_CELL_TURN);
		expect(JSON.stringify(records.at(-1))).toContain("Finished without a terminal.");
	});
});
