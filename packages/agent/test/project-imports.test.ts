import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { runCliText } from "prime-agent-test-support/cli-process";
import {
	type LoopbackServer,
	localModelWorld,
	openAiCompletionsServer,
	type ScriptedReply,
} from "prime-agent-test-support/loopback-servers";
import type { TempWorld } from "prime-agent-test-support/temp-home";
import { afterEach, expect, it } from "vitest";

/**
 * Modules a repository could hold to take over the kernel: what it imports as it starts (zmq,
 * ipykernel, traitlets, a standard module), what it imports later on its own (dill on a state
 * save, astroid on the first traceback), and our own packages.
 */
const SHADOWS = ["zmq", "ipykernel", "traitlets", "asyncio", "dill", "astroid", "prime_kernel", "prime_agent_runtime"];

/**
 * A project module that records it ran (a file named after it in `markers`), then steps aside for
 * the real module, as an attack would, so the kernel goes on working and nothing else gives it away.
 */
function shadowSource(markers: string): string {
	return `import importlib, os, sys
open(os.path.join(${JSON.stringify(markers)}, __name__), "w").close()
_folder = os.path.dirname(os.path.abspath(__file__))
del sys.modules[__name__]
_path = sys.path[:]
sys.path[:] = [p for p in sys.path if p not in ("", ".") and os.path.abspath(p) != _folder]
try:
    sys.modules[__name__] = importlib.import_module(__name__)
finally:
    sys.path[:] = _path
`;
}

let world: TempWorld | undefined;
let server: LoopbackServer | undefined;
afterEach(async () => {
	await server?.close();
	server = undefined;
	world?.cleanup();
	world = undefined;
});

/** A project holding SHADOWS and the user's own `mymodule.py`; the model plays `script`. */
async function shadowedProject(script: ScriptedReply[]): Promise<{ markers: string; world: TempWorld }> {
	const local = await localModelWorld(script);
	world = local.world;
	server = local.server;
	const markers = join(world.home, "..", "markers");
	mkdirSync(markers);
	for (const name of SHADOWS) world.writeProject(`${name}.py`, shadowSource(markers));
	world.writeProject("mymodule.py", "VALUE = 'from the project'\n");
	return { markers, world };
}

/** The tool results the model was sent, in order. */
function toolResults(model: LoopbackServer): string[] {
	const last = model.requests.at(-1)?.messages as { role: string; content: unknown }[];
	return last
		.filter((message) => message.role === "tool")
		.map((message) => (typeof message.content === "string" ? message.content : JSON.stringify(message.content)));
}

it("a session in a repository imports nothing from it, through a traceback, a state save and a resume; a cell still imports the project's module", async () => {
	const { markers, world } = await shadowedProject([
		{ code: "import mymodule\nprint(mymodule.VALUE)" },
		{ code: "1 / 0" },
		{ text: "done" },
	]);
	const first = await runCliText(["--mode", "json", "--model", "local/coder", "-p", "go"], world.project, world.env);
	expect(first.code, first.stderr).toBe(0);
	expect(toolResults(server as LoopbackServer)[0]).toBe("from the project");
	expect(toolResults(server as LoopbackServer)[1]).toContain("ZeroDivisionError");
	const sessionId = (JSON.parse(first.stdout.split("\n")[0]) as { id: string }).id;
	// The run saved the kernel's state (dill) at its end, `mymodule` among the imports to restore.
	const stateDir = join(world.home, "sessions", sessionId, "kernel-state");
	expect(JSON.parse(readFileSync(join(stateDir, "manifest.json"), "utf8")).imports).toEqual({ mymodule: "mymodule" });

	// Resumed from another folder by the session file: the kernel starts in the session's folder
	// again, restores the state (importing `mymodule` again), and still takes nothing else from it.
	const resumed = await switchModel([{ code: "print(mymodule.VALUE, 6 * 7)" }, { text: "done" }]);
	const elsewhere = join(world.home, "..", "elsewhere");
	mkdirSync(elsewhere);
	const sessionFile = join(world.home, "sessions", `${sessionId}.jsonl`);
	const second = await runCliText(["--model", "local/coder", "-r", sessionFile, "-p", "again"], elsewhere, world.env);
	expect(second.code, second.stderr).toBe(0);
	expect(second.stderr + second.stdout).toContain(`Working in the session's directory: ${world.project}`);
	expect(toolResults(resumed).at(-1)).toMatch(/from the project 42$/);

	expect(readdirSync(markers)).toEqual([]);
}, 120_000); // two command-line runs, each starting its own kernel

/** Points the world's `local/coder` at a new loopback server playing `script` (the old one is closed). */
async function switchModel(script: ScriptedReply[]): Promise<LoopbackServer> {
	await server?.close();
	server = await openAiCompletionsServer(script);
	world?.writeHome("models.json", {
		providers: { local: { baseUrl: server.baseUrl, api: "openai-completions", models: [{ id: "coder" }] } },
	});
	return server;
}
