import { spawnCli } from "prime-agent-test-support/cli-process";
import { type DaemonWorld, endDaemonTest, makeDaemonWorld, type Spawned } from "prime-agent-test-support/daemon-world";
import { afterEach, describe, expect, it, vi } from "vitest";
import { LIVE_OUTPUT_CHARS } from "../src/tools/ipython/live-output.js";

// Real processes: a supervisor, a worker, its kernel, and the command line.
vi.setConfig({ testTimeout: 120_000 });

let world: DaemonWorld | undefined;
const clients: Spawned[] = [];
afterEach(async () => {
	await endDaemonTest(world, clients);
	world = undefined;
});

/** 50 MB printed in 1 MB writes, for a few seconds, so many progress updates go out meanwhile. */
const FIFTY_MB_CELL =
	"import sys, time\nchunk = ('y' * 99 + '\\n') * 10_000\nfor i in range(50):\n    sys.stdout.write(chunk)\n    time.sleep(0.05)\nprint('done printing')";

describe("a cell that prints 50 MB in a worker", () => {
	it("ends the turn with the kernel's capped output; every progress update carries only the latest output", async () => {
		world = await makeDaemonWorld([{ code: FIFTY_MB_CELL }, { text: "Printed it." }]);
		const cli = spawnCli(["--mode", "json", "-p", "print a lot", "--model", "local/coder"], world.project, world.env);
		clients.push(cli);
		expect(await cli.exitCode()).toBe(0);
		const updates = cli.events.filter((event) => event.type === "tool_execution_update") as {
			partialResult: { content: { text: string }[]; details: { stdout: string } };
		}[];
		expect(updates.length).toBeGreaterThan(1);
		for (const update of updates) {
			const text = update.partialResult.content[0]?.text ?? "";
			// The latest characters, after a note of how many came before.
			expect(text.length).toBeLessThanOrEqual(LIVE_OUTPUT_CHARS + 60);
			expect(update.partialResult.details.stdout).toBe(text);
		}
		expect(updates.at(-1)?.partialResult.content[0]?.text).toMatch(/^\[… [\d,]+ earlier characters\]\ny+\n/);
		const end = cli.events.find((event) => event.type === "tool_execution_end") as {
			result: { content: { text: string }[]; details: { status: string; fullOutputPath?: string } };
		};
		expect(end.result.details.status).toBe("ok");
		expect(end.result.details.fullOutputPath).toMatch(/\.txt$/);
		expect(end.result.content[0]?.text).toContain("done printing");
		expect(cli.events.at(-1)).toMatchObject({ type: "result", status: "ok" });
	});
});
