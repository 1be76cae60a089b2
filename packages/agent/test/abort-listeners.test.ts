import { kernelPythonForTests } from "prime-agent-test-support/kernel-python";
import { type LoopbackServer, openAiCompletionsServer } from "prime-agent-test-support/loopback-servers";
import { makeTempWorld, type TempWorld } from "prime-agent-test-support/temp-home";
import { afterEach, expect, it } from "vitest";
import { runCli } from "../src/cli/index.js";
import { memoryIo } from "./cli-io.js";

let world: TempWorld;
let server: LoopbackServer;
const warnings: Error[] = [];
const onWarning = (warning: Error) => warnings.push(warning);
afterEach(async () => {
	process.off("warning", onWarning);
	await server?.close();
	world?.cleanup();
});

it("a run of 100 model calls over HTTP leaves no listener warning: each call's abort listener goes when it ends", {
	timeout: 180_000,
}, async () => {
	process.on("warning", onWarning);
	const cells = Array.from({ length: 99 }, (_, index) => ({ code: `n = ${index}` }));
	server = await openAiCompletionsServer([...cells, { text: "done" }]);
	world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests() });
	world.writeHome("models.json", {
		providers: { local: { baseUrl: server.baseUrl, api: "openai-completions", models: [{ id: "coder" }] } },
	});
	const io = memoryIo(world.project, world.env);
	expect(await runCli(["-p", "count to 99", "--model", "local/coder"], io)).toBe(0);
	expect(server.requests.length).toBe(100);
	// Warnings are emitted on a later tick.
	await new Promise((resolve) => setImmediate(resolve));
	expect(warnings.map((warning) => warning.message)).toEqual([]);
});
