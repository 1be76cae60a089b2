import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type AgeingRun, type Arm, PrimeContextArm, peerArms } from "../arms/index.js";
import { primeContextDeps } from "../arms/prime-context-binding.js";
import type { Trajectory } from "../corpus/index.js";
import { runTrajectories } from "./trajectories.js";

const scratch = await mkdtemp(join(tmpdir(), "bench-replay-"));
afterAll(() => rm(scratch, { recursive: true, force: true }));

/** Command of each step: the last repeats the first. */
const COMMANDS = [
	"cat src/a.py",
	"cat src/b.py",
	"cat src/c.py",
	"grep -rn x src",
	"ls src",
	"cat src/d.py",
	"ls",
	"cat src/a.py",
];

/** A run of 8 steps, each output 120 distinct numbered lines, then a final assistant message. */
function trajectory(id: string): Trajectory {
	return {
		id,
		system: "You are a helpful assistant that can run bash commands.",
		task: "Fix the bug in src/a.py.",
		steps: COMMANDS.map((command, step) => ({
			assistant: `THOUGHT: step ${step}.\n\n\`\`\`bash\n${command}\n\`\`\``,
			command,
			observation: `<returncode>0</returncode>\n<output>\n${Array.from({ length: 120 }, (_, line) => `${step}:${line} value_${step * 1000 + line} = compute(${line})`).join("\n")}\n</output>`,
			exitCode: 0,
		})),
		trailing: ["Done.\n\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```"],
	};
}

/** The same run, its first step a test run: the newest result of `pytest -q`, never aged. */
function testedFirst(id: string): Trajectory {
	const run = trajectory(id);
	const [first, ...rest] = run.steps;
	const tests = Array.from({ length: 100 }, (_, i) => `tests/test_a.py::test_${i} PASSED`).join("\n");
	const output = `${tests}\nFAILED tests/test_a.py::test_x - AssertionError\n===== 1 failed, 100 passed in 0.52s =====`;
	return {
		...run,
		steps: [
			{
				...(first as Trajectory["steps"][number]),
				command: "pytest -q",
				observation: `<returncode>1</returncode>\n<output>\n${output}\n</output>`,
				exitCode: 1,
			},
			...rest,
		],
	};
}

const raw = peerArms().find((arm) => arm.name === "raw") as Arm;

describe("trajectory replay of the prime-context arm", () => {
	it("gives a row without ageing (the broker alone) and the default row with ageing, every aged output read back", async () => {
		const ours = new PrimeContextArm(primeContextDeps, join(scratch, "ok"));
		const results = await runTrajectories([trajectory("run-1"), trajectory("run-2")], [raw, ours]);
		expect(results.map((row) => row.arm)).toEqual(["raw", "prime-context-no-ageing", "prime-context"]);
		const [plain, noAgeing, aged] = results;
		// Outputs this small pass through the broker unchanged: without ageing it bills exactly as raw.
		expect(noAgeing?.cost).toEqual(plain?.cost);
		expect(noAgeing?.cumulativePromptTokens).toBe(plain?.cumulativePromptTokens);
		const replays = aged?.ageing?.replays ?? [];
		expect(replays.map((replay) => `${replay.prices}/${replay.remaining}`)).toEqual([
			"anthropic/estimated",
			"openai/estimated",
			"anthropic/true",
			"openai/true",
		]);
		const [anthropic, openai] = replays;
		expect(aged?.cost).toEqual({ anthropic: anthropic?.cost, openai: openai?.cost });
		expect(aged?.cumulativePromptTokens).toBe(anthropic?.cumulativePromptTokens);
		expect(aged?.ageing?.window).toBe(5);
		expect(openai?.aged).toBe(6);
		expect(openai?.moments).toBe(6);
		// Calls 6, 7 and 8 each age the observation that leaves the window of 5 (0, 1, 2); the command of
		// step 7 repeats that of step 0, aged by then: one repeat in each run.
		expect(openai?.repeatedCommands).toBe(2);
		for (const replay of replays) {
			expect(replay.agedMismatches).toEqual([]);
			expect(replay.agedByteExact).toBe(replay.aged);
		}
		// A run of 9 calls is short: at call 6 the estimate expects 6 more calls where 2 follow, so the
		// OpenAI-priced ageing costs more than none; the oracle, knowing that, ages nothing. At Anthropic's
		// ratios 6 calls to come do not pay for the re-write: nothing is aged.
		expect(replays.map((replay) => [replay.aged, replay.cost])).toEqual([
			[0, plain?.cost.anthropic],
			[6, 73_531],
			[0, plain?.cost.anthropic],
			[0, plain?.cost.openai],
		]);
		expect(plain?.cost.openai).toBe(63_865);
		expect(ours.recovery.byteExact).toBe(16);
	});

	it("reports an aged observation whose read-back from its stub's id differs from what was recorded", async () => {
		const ours = new PrimeContextArm(primeContextDeps, join(scratch, "lossy"));
		// The same arm, but its archive gives back one byte less: what the check must catch.
		const lossy: Arm = {
			name: ours.name,
			rule: ours.rule,
			async open(runId) {
				const run = await ours.open(runId);
				const ageing = run.ageing as AgeingRun;
				return {
					...run,
					ageing: { ...ageing, readBytes: async (id) => (await ageing.readBytes(id)).subarray(1) },
				};
			},
		};
		const [, , aged] = await runTrajectories([trajectory("run-1")], [raw, lossy]);
		const openai = aged?.ageing?.replays[1];
		expect(openai?.aged).toBe(3);
		expect(openai?.agedByteExact).toBe(0);
		expect(openai?.agedMismatches[0]).toMatch(/^run-1\/obs_\d+: read back \d+ bytes, recorded \d+$/);
	});

	it("never ages the newest result of a test command (an outcome line TEST_RESULT ...)", async () => {
		const ours = new PrimeContextArm(primeContextDeps, join(scratch, "tested"));
		const [, , aged] = await runTrajectories([testedFirst("run-1")], [raw, ours]);
		const openai = aged?.ageing?.replays[1];
		// Observations 1 and 2 leave the window and are aged; 0, the only test run, stays.
		expect(openai?.aged).toBe(2);
		expect(openai?.repeatedCommands).toBe(0);
	});
});
