import { afterEach, describe, expect, it } from "vitest";
import { kernelPythonForTests } from "../../agent/test/kernel-python.js";
import { type LoopbackServer, openAiCompletionsServer, type ScriptedReply } from "../../agent/test/loopback-servers.js";
import { makeTempWorld, type TempWorld } from "../../agent/test/temp-home.js";
import { startInTmux, type TmuxPane } from "./tmux.js";

let server: LoopbackServer | undefined;
let world: TempWorld | undefined;
let pane: TmuxPane | undefined;

afterEach(async () => {
	pane?.kill();
	pane = undefined;
	await server?.close();
	server = undefined;
	world?.cleanup();
	world = undefined;
});

/** `prime-agent` with no prompt, in an 80x24 tmux pane, on a loopback model answering `script`. */
async function startAgent(script: ScriptedReply[], args: string[] = []): Promise<TmuxPane> {
	server = await openAiCompletionsServer(script);
	world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests() });
	world.writeHome("models.json", {
		providers: { local: { baseUrl: server.baseUrl, models: [{ id: "coder", contextWindow: 32768 }] } },
	});
	pane = startInTmux(["--model", "local/coder", ...args], { cwd: world.project, env: world.env });
	await pane.waitFor("kernel not started");
	return pane;
}

describe("prime-agent on a terminal (tmux, 80x24)", () => {
	it("streams the answer and shows the cell with its result", async () => {
		const tui = await startAgent([{ code: "x = 6 * 7\nprint(x)" }, { text: "The answer is **42**." }]);
		tui.type("what is six times seven?");
		tui.keys("Enter");
		const screen = await tui.waitFor("The answer is 42.");
		expect(screen).toContain("› what is six times seven?");
		expect(screen).toContain("x = 6 * 7");
		expect(screen).toMatch(/│ 42/);
		expect(screen).toMatch(/✓ ipython \d+\.\ds/);
		expect(screen).toContain("local/coder");
		tui.keys("C-d");
		await tui.waitFor("Session saved: resume with `prime-agent --resume");
	});
});
