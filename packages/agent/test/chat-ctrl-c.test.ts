import { existsSync } from "node:fs";
import { join } from "node:path";
import { spawnCliText } from "prime-agent-test-support/cli-process";
import {
	type DaemonWorld,
	endDaemonTest,
	eventually,
	makeDaemonWorld,
	type Spawned,
} from "prime-agent-test-support/daemon-world";
import { afterEach, describe, expect, it, vi } from "vitest";

// Real processes: the command line, a supervisor and a worker (or none in process), a kernel, a loopback model.
vi.setConfig({ testTimeout: 240_000 });

let world: DaemonWorld | undefined;
const clients: Spawned[] = [];
afterEach(async () => {
	await endDaemonTest(world, clients);
	world = undefined;
});

/** A cell that says it has started (a file in the project), then runs for two minutes. */
const LONG_CELL = "import time\nopen('cell-started', 'w').close()\ntime.sleep(120)";

describe("Ctrl-C in the line chat fed by a pipe (`cat prompts | prime-agent`)", () => {
	for (const where of ["in process", "through a daemon worker"] as const)
		it(`interrupts the running cell instead of killing the view (${where})`, async () => {
			world = await makeDaemonWorld([{ code: LONG_CELL }, { text: "Stopped waiting." }]);
			if (where === "in process") world.env.PRIME_AGENT_IN_PROCESS = "1";
			const chat = spawnCliText(["--model", "local/coder"], world.project, world.env);
			clients.push(chat);
			// The input ends at once: the chat waits for its prompt's run, then leaves.
			chat.child.stdin?.end("run the long job\n");
			const started = join(world.project, "cell-started");
			await eventually("the cell to start", () => existsSync(started));
			// What a terminal's Ctrl-C sends the foreground process when the chat's input is a pipe.
			chat.child.kill("SIGINT");

			expect(await chat.exitCode()).toBe(0);
			expect(chat.stderr()).toContain("\nInterrupting the running cell (Ctrl-C again stops the turn)…\n");
			expect(chat.stdout()).toContain("Stopped waiting.\n");
			// The model was told of the interruption and answered once more.
			expect(world.server.requests.length).toBe(2);
			expect(JSON.stringify(world.server.requests[1])).toContain("KeyboardInterrupt");
		});
});
