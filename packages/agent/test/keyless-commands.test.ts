import { existsSync } from "node:fs";
import { join } from "node:path";
import { getProviders } from "@mariozechner/pi-ai";
import { runCliText } from "prime-agent-test-support/cli-process";
import { killDaemon } from "prime-agent-test-support/daemon-world";
import { kernelPythonForTests } from "prime-agent-test-support/kernel-python";
import { makeTempWorld, type TempWorld } from "prime-agent-test-support/temp-home";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runCli } from "../src/cli/index.js";
import { ExitCode } from "../src/errors.js";
import { providerEnvironment } from "../src/providers/env-keys.js";
import { memoryIo } from "./cli-io.js";

// Real processes: the built command line, the daemon's supervisor and worker, a kernel.
vi.setConfig({ testTimeout: 180_000 });

let world: TempWorld | undefined;
afterEach(() => {
	if (world) killDaemon(world.home);
	world?.cleanup();
	world = undefined;
});

const NO_MODEL = "No model selected and no provider key found.";
const NO_MODEL_HINT =
	'Pass --model provider/id (e.g. --model anthropic/claude-sonnet-4-5), export a key such as ANTHROPIC_API_KEY or OPENAI_API_KEY, or set "defaultModel" in settings.json.';

type Way = "in process" | "built CLI in process" | "built CLI through the daemon";
const WAYS: Way[] = ["in process", "built CLI in process", "built CLI through the daemon"];

/**
 * An agent home with no key anywhere (no auth.json, no models.json, not one variable any provider
 * reads), run the way `way` names.
 */
function keylessWorld(way: Way): TempWorld {
	const made = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests() });
	if (way === "built CLI through the daemon") delete made.env.PRIME_AGENT_IN_PROCESS;
	const keyVariables = getProviders().flatMap((provider) => {
		const { keys, ambient } = providerEnvironment(provider);
		return [...keys, ...ambient];
	});
	expect(keyVariables.length).toBeGreaterThan(10);
	expect(keyVariables.filter((name) => made.env[name] !== undefined)).toEqual([]);
	return made;
}

async function run(way: Way, w: TempWorld, prompt: string): Promise<{ code: number | null; out: string; err: string }> {
	if (way === "in process") {
		const io = memoryIo(w.project, w.env);
		const code = await runCli(["-p", prompt], io);
		return { code, out: io.out(), err: io.err() };
	}
	const result = await runCliText(["-p", prompt], w.project, w.env);
	return { code: result.code, out: result.stdout, err: result.stderr };
}

describe.each(WAYS)("with no model and no provider key (%s)", (way) => {
	it("a slash command that calls no model runs: /pc status answers on stdout, exit 0", async () => {
		world = keylessWorld(way);
		const result = await run(way, world, "/pc status");
		expect(result.err).toBe("");
		expect(result.code).toBe(ExitCode.ok);
		expect(result.out.split("\n")[0]).toBe("Prime Context status");
		expect(result.out).toContain("\nmode: on (this session)\n");
	});

	it("a prompt or a command that calls the model fails with the key hint and exit 3, and records nothing", async () => {
		world = keylessWorld(way);
		for (const prompt of ["hello", "/compact"]) {
			const result = await run(way, world, prompt);
			expect(result.code).toBe(ExitCode.missingCredentials);
			expect(result.out).toBe("");
			// In process and through the daemon alike, the command line prefixes "Error: ".
			expect(result.err, prompt).toBe(`Error: ${NO_MODEL}\n${NO_MODEL_HINT}\n`);
		}
		// No session file holds a model the run never used: with a key, the next run chooses afresh.
		expect(existsSync(join(world.home, "sessions"))).toBe(false);
	});
});
