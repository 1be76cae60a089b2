import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type CliProcess, spawnCli } from "prime-agent-test-support/cli-process";
import { kernelPythonForTests } from "prime-agent-test-support/kernel-python";
import { type LoopbackServer, openAiCompletionsServer } from "prime-agent-test-support/loopback-servers";
import { makeTempWorld, type TempWorld } from "prime-agent-test-support/temp-home";
import { afterEach, expect, it } from "vitest";
import { INJECTED_HANDLES } from "../src/kernel-state/index.js";
import { SessionKernel } from "../src/tools/index.js";

let world: TempWorld;
let server: LoopbackServer | undefined;
let kernel: SessionKernel | undefined;
afterEach(async () => {
	await kernel?.dispose();
	kernel = undefined;
	await server?.close();
	server = undefined;
	world?.cleanup();
});

async function runCli(args: string[]): Promise<CliProcess> {
	const cli = spawnCli(["--mode", "json", "--model", "local/coder", ...args], world.project, world.env);
	const code = await cli.exitCode();
	expect(code, cli.stderr()).toBe(0);
	return cli;
}

async function withModel(script: Parameters<typeof openAiCompletionsServer>[0]): Promise<LoopbackServer> {
	await server?.close();
	server = await openAiCompletionsServer(script);
	world.writeHome("models.json", { providers: { local: { baseUrl: server.baseUrl, models: [{ id: "coder" }] } } });
	return server;
}

/** The text of the last tool result the model was sent in request `index`. */
function toolResultSent(model: LoopbackServer, index: number): string {
	const messages = model.requests[index].messages as { role: string; content: unknown }[];
	const result = messages.filter((message) => message.role === "tool").at(-1);
	return typeof result?.content === "string" ? result.content : JSON.stringify(result?.content);
}

const DEFINE = [
	"import socket",
	"data = {'k': 7, 'items': [1, 2, 3]}",
	"def double(n): return 2 * n + data['k'] - 7",
	"class Point:",
	"    def __init__(self, x, y): self.x, self.y = x, y",
	"    def norm2(self): return self.x ** 2 + self.y ** 2",
	"p = Point(3, 4)",
	"conn = socket.socket()",
	"print('defined')",
].join("\n");

it("a resumed session in a new process gets back a dict, a function and a class instance, and is told the socket is lost", async () => {
	world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests() });
	await withModel([{ code: DEFINE }, { text: "set up" }]);
	const first = await runCli(["-p", "define things"]);
	const session = first.events[0] as { id: string; path: string };

	const stateDir = join(world.home, "sessions", session.id, "kernel-state");
	const manifest = JSON.parse(readFileSync(join(stateDir, "manifest.json"), "utf8"));
	expect(manifest.variables.map((v: { name: string }) => v.name).sort()).toEqual(["Point", "data", "double", "p"]);
	expect(manifest.imports).toEqual({ socket: "socket" });
	expect(manifest.unsaveable).toMatchObject([{ name: "conn", type: "socket" }]);
	// Injected handles and the output history are never saved.
	const names = JSON.stringify(manifest);
	for (const never of ['"edit"', '"asyncio"', '"Out"', '"In"', '"_"']) expect(names).not.toContain(never);
	expect(statSync(stateDir).mode & 0o777).toBe(0o700);
	for (const file of readdirSync(join(stateDir, "vars"))) {
		expect(statSync(join(stateDir, "vars", file)).mode & 0o777).toBe(0o600);
	}

	const check = "print(data['items'], double(21), p.norm2(), isinstance(p, Point), 'conn' in dir(), callable(edit))";
	const model = await withModel([{ code: check }, { code: "data['k'] = 8\nprint(data['k'])" }, { text: "all back" }]);
	await runCli(["--resume", session.id, "-p", "use them"]);
	const firstRequest = JSON.stringify(model.requests[0].messages);
	expect(firstRequest).toMatch(
		/The state saved after cell 1 of this conversation \(entry [0-9a-f]{8}\), its last cell, is restored when it starts/,
	);
	const result = toolResultSent(model, 1);
	expect(result).toContain("came back from the saved state");
	for (const name of ["data", "double", "Point", "p", "socket"]) expect(result).toContain(name);
	expect(result).toMatch(/Not restored.*conn \(a socket could not be saved: .*socket/);
	expect(result).toContain("[1, 2, 3] 42 25 True False True");
	// The notice comes once: the next cell of the same run says nothing about the state.
	expect(toolResultSent(model, 2)).toBe("8");

	// What the second run changed is what the third one gets.
	const third = await withModel([{ code: "print(data['k'], double(1))" }, { text: "done" }]);
	await runCli(["--resume", session.id, "-p", "again"]);
	expect(toolResultSent(third, 1)).toMatch(/came back[\s\S]*\n8 3$/);

	// A fork starts from its parent's snapshot and saves into its own folder.
	const fork = await withModel([{ code: "data['k'] = 9\nprint(double(1))" }, { text: "forked" }]);
	const forked = await runCli(["--fork", session.id, "-p", "branch off"]);
	expect(toolResultSent(fork, 1)).toMatch(/came back[\s\S]*\n4$/);
	const forkId = (forked.events[0] as { id: string }).id;
	expect(forkId).not.toBe(session.id);
	const forkManifest = readFileSync(join(world.home, "sessions", forkId, "kernel-state", "manifest.json"), "utf8");
	expect(forkManifest).toContain('"double"');
}, 120_000); // four command-line runs, each starting its own kernel

it("a corrupt snapshot does not break the resume: the model is told and the kernel starts empty", async () => {
	world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests() });
	await withModel([{ code: "kept = 1" }, { text: "set up" }]);
	const first = await runCli(["-p", "define"]);
	const session = first.events[0] as { id: string };
	const stateDir = join(world.home, "sessions", session.id, "kernel-state");
	const manifests = [
		join(stateDir, "manifest.json"),
		...readdirSync(join(stateDir, "entries"))
			.filter((name) => name.endsWith(".json"))
			.map((name) => join(stateDir, "entries", name)),
	];
	expect(manifests).toHaveLength(2);
	for (const manifest of manifests) expect(readFileSync(manifest, "utf8")).toContain('"kept"');
	// The damage happens between the two runs.
	for (const manifest of manifests) writeFileSync(manifest, '{"format": 1, "variables": [');

	const model = await withModel([{ code: "print('kept' in dir())" }, { text: "fine" }]);
	await runCli(["--resume", session.id, "-p", "go on"]);
	expect(JSON.stringify(model.requests[0].messages)).toContain("its saved state could not be read");
	expect(toolResultSent(model, 1)).toContain("False");
}, 180_000); // two command-line runs, each starting its own kernel

/** A session kernel saving into `<home>/state`; `nextSave()` resolves with the names of the next save. */
function savingKernel(): { kernel: SessionKernel; nextSave(): Promise<string[]>; saves(): number } {
	const waiters: ((names: string[]) => void)[] = [];
	let saves = 0;
	const saving = new SessionKernel({
		cwd: world.project,
		outputDir: join(world.home, "outputs"),
		python: kernelPythonForTests(),
		state: {
			dir: join(world.home, "state"),
			onSaved: (outcome) => {
				saves++;
				const names = outcome.ok ? outcome.report.variables.map((variable) => variable.name) : ["failed"];
				waiters.shift()?.(names);
			},
		},
	});
	kernel = saving;
	return { kernel: saving, nextSave: () => new Promise((resolve) => waiters.push(resolve)), saves: () => saves };
}

it("a cell that runs on for minutes does not hold back the save of the cells before it", async () => {
	world = makeTempWorld();
	const { kernel: session, nextSave } = savingKernel();
	await session.run("a = 1");
	const saved = nextSave();
	// The next cell comes before the quiet time is over: the save runs before it starts.
	const long = session.run("import time\nb = 2\ntime.sleep(600)");
	expect(await saved).toEqual(["a"]);
	expect(session.interruptCell()).toBe(true);
	expect((await long).cell.status).toBe("aborted");
});

it("saves once the kernel is quiet, before the next cell otherwise, never for a failed cell, and at the end", async () => {
	world = makeTempWorld();
	const { kernel: session, nextSave, saves: count } = savingKernel();
	const quiet = nextSave();
	await session.run("a = 1");
	expect(await quiet).toEqual(["a"]);
	const saves = [nextSave(), nextSave()];
	await session.run("b = 2");
	// b is saved before the failed cell runs; the failed cell and `c = 3` then start with nothing to save.
	await session.run("raise ValueError('no save for a failed cell')");
	await session.run("c = 3");
	await session.dispose();
	expect(await Promise.all(saves)).toEqual([
		["a", "b"],
		["a", "b", "c"],
	]);
	expect(count()).toBe(3);
});

it("never saves what the runtime or an extension's start-up code defines in every kernel", async () => {
	world = makeTempWorld();
	const { kernel: session, nextSave } = savingKernel();
	session.addStartupCode("import json as injected_by_extension\nhelper = 1", {
		names: ["injected_by_extension", "helper"],
	});
	await session.run("mine = [edit, asyncio, compact, injected_by_extension, helper]");
	const saved = nextSave();
	await session.dispose();
	expect(await saved).toEqual(["mine"]);
	const manifest = JSON.parse(readFileSync(join(world.home, "state", "manifest.json"), "utf8"));
	expect(manifest.imports).toEqual({});
	expect(manifest.variables.map((variable: { name: string }) => variable.name)).toEqual(["mine"]);
	expect(INJECTED_HANDLES).toEqual(expect.arrayContaining(["edit", "asyncio", "compact"]));
});
