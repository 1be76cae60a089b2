import { describe, expect, it } from "vitest";
import { parseArgs } from "../cli/args.js";

describe("daemon commands on the command line", () => {
	it("reads attach, shutdown, agents, status and schedule", () => {
		expect(parseArgs(["attach", "ab12cd34"])).toMatchObject({ command: "attach", agentRef: "ab12cd34" });
		expect(parseArgs(["shutdown"])).toMatchObject({ command: "shutdown", agentRef: undefined, force: false });
		expect(parseArgs(["shutdown", "ab12", "--force"])).toMatchObject({
			command: "shutdown",
			agentRef: "ab12",
			force: true,
		});
		expect(parseArgs(["agents", "--json"])).toMatchObject({ command: "agents", json: true });
		expect(parseArgs(["status"])).toMatchObject({ command: "status" });
		expect(parseArgs(["schedule", "every 10m", "run the tests", "--agent", "ab12", "--steer"])).toMatchObject({
			command: "schedule",
			scheduleArgs: ["every 10m", "run the tests"],
			agentRef: "ab12",
			steer: true,
		});
	});

	it("refuses what does not fit, saying what to write", () => {
		const refusal = (argv: string[]) => {
			try {
				parseArgs(argv);
			} catch (error) {
				return `${(error as Error).message} | ${(error as { hint: string }).hint}`;
			}
			return "accepted";
		};
		expect(refusal(["attach"])).toBe(
			"`prime-agent attach` needs an agent. | Write prime-agent attach <agent>; `prime-agent agents` lists them.",
		);
		expect(refusal(["attach", "a", "b"])).toBe(
			'Unexpected argument "b". | Write prime-agent attach <agent>; `prime-agent agents` lists them.',
		);
		expect(refusal(["shutdown", "a", "b"])).toBe(
			'Unexpected argument "b". | Write prime-agent shutdown [<agent>] [--force].',
		);
		expect(refusal(["status", "now"])).toBe(
			'Unexpected argument "now" for `prime-agent status`. | `prime-agent status` takes no arguments.',
		);
		expect(refusal(["agents", "--force"])).toBe(
			"--force works only with `prime-agent shutdown`. | See `prime-agent --help`.",
		);
		expect(refusal(["-p", "hi", "--steer"])).toBe(
			"--steer works only with `prime-agent schedule`. | See `prime-agent --help`.",
		);
		expect(refusal(["attach", "a", "--agent", "b"])).toBe(
			"--agent works only with `prime-agent schedule`. | Name the agent directly: prime-agent attach <agent>.",
		);
	});
});
