import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { kernelPythonForTests } from "prime-agent-test-support/kernel-python";
import {
	type LoopbackServer,
	openAiCompletionsServer,
	type ScriptedReply,
} from "prime-agent-test-support/loopback-servers";
import { makeTempWorld, type TempWorld } from "prime-agent-test-support/temp-home";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CLI, startInTmux, type TmuxPane } from "./tmux.js";

/** A real failing pytest run (134 KB, two failing tests) from the fixture outputs. */
const LOG = readFileSync(
	new URL("../../../fixtures/outputs/006-attrs-validator-flip-verbose/output.txt", import.meta.url),
	"utf8",
);

// A real command line with a real kernel in tmux: tens of seconds on a loaded machine.
vi.setConfig({ testTimeout: 120_000 });

let server: LoopbackServer | undefined;
let world: TempWorld | undefined;
let pane: TmuxPane | undefined;
let piped: ChildProcess | undefined;

afterEach(async () => {
	await pane?.kill();
	pane = undefined;
	piped?.kill("SIGKILL");
	piped = undefined;
	await server?.close();
	server = undefined;
	world?.cleanup();
	world = undefined;
});

/** `prime-agent` with no prompt, in an 80x24 tmux pane (or `width` columns), on a loopback model answering `script`. */
async function startAgent(
	script: ScriptedReply[],
	options: {
		env?: Record<string, string>;
		files?: Record<string, string>;
		/** Files written into the agent home (name relative to it). */
		homeFiles?: Record<string, string>;
		ready?: string;
		width?: number;
		/** Typed before the program starts (it is released after), so before it draws anything. */
		typeAhead?: (pane: TmuxPane) => void;
	} = {},
): Promise<TmuxPane> {
	server = await openAiCompletionsServer(script);
	world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests(), ...options.env });
	const models = [
		{ id: "coder", contextWindow: 32768 },
		{ id: "coder-2", contextWindow: 65536 },
	];
	world.writeHome("models.json", { providers: { local: { baseUrl: server.baseUrl, models } } });
	for (const [name, text] of Object.entries(options.files ?? {})) world.writeProject(name, text);
	for (const [name, text] of Object.entries(options.homeFiles ?? {})) {
		mkdirSync(dirname(join(world.home, name)), { recursive: true });
		writeFileSync(join(world.home, name), text);
	}
	pane = startInTmux(["--model", "local/coder"], {
		cwd: world.project,
		env: world.env,
		width: options.width,
		gated: options.typeAhead !== undefined,
	});
	if (options.typeAhead) {
		options.typeAhead(pane);
		pane.release();
	}
	await pane.waitFor(options.ready ?? "kernel not started");
	return pane;
}

/** The editor's lines: those between its two rules (the last two lines of `─`). */
function editorLines(screen: string): string[] {
	const lines = screen.split("\n");
	const rules = lines.flatMap((line, index) => (/^─+$/.test(line) ? [index] : []));
	return lines.slice((rules.at(-2) ?? 0) + 1, rules.at(-1));
}

/** Lines of the screen wider than `width` columns (none, when the layout fits). */
function overflowing(screen: string, width: number): string[] {
	return screen.split("\n").filter((line) => [...line].length > width);
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

	it("shows a large failing test log as a capsule card, and Ctrl-O reads the archive in place", async () => {
		const tui = await startAgent([{ code: "print(open('pytest.log').read(), end='')" }, { text: "Two tests fail." }], {
			files: { "pytest.log": LOG },
		});
		tui.type("run the tests");
		tui.keys("Enter");
		const card = await tui.waitFor("Two tests fail.");
		expect(card).toMatch(/┌ obs_\d+ · ipython · [\d,]+ bytes · [\d,]+ lines/);
		expect(card).toMatch(/│ TEST_RESULT FAIL 2 failed/);
		expect(card).toContain("└ archived · Ctrl-O reads it here");
		const calls = server?.requests.length;
		tui.keys("C-o");
		// The first page, numbered as /pc read numbers lines, ends with the command that reads on.
		const expanded = await tui.waitFor(/\d+ more lines\. Next: \/pc read obs_\d+ 41:80/);
		expect(expanded).toMatch(/^│ 40:/m);
		expect(expanded).toContain("└ Ctrl-O collapses");
		expect(server?.requests.length).toBe(calls);
	});

	it("Esc interrupts a long cell; the kernel keeps its variables and the run goes on", async () => {
		const tui = await startAgent([
			{ code: "kept = 41\nimport time\ntime.sleep(60)" },
			{ code: "print(kept + 1)" },
			{ text: "Interrupted; kept is still there." },
		]);
		tui.type("run the long job");
		tui.keys("Enter");
		await tui.waitFor("kernel busy");
		tui.keys("Escape");
		const screen = await tui.waitFor("Interrupted; kept is still there.");
		expect(screen).toContain("✗ interrupted ipython");
		expect(screen).toMatch(/│ 42/);
	});

	it("Ctrl-C on a typed line clears the editor on screen at once (a second press is not needed to see it)", async () => {
		const tui = await startAgent([]);
		tui.type("half a thought");
		await tui.waitFor((screen) => editorLines(screen).join("\n") === " half a thought");
		tui.keys("C-c");
		const cleared = await tui.waitFor((screen) => editorLines(screen).join("\n") === "");
		expect(cleared).not.toContain("half a thought");
		expect(cleared).not.toContain("Ctrl-C again");
		expect(tui.exited()).toBe(false);
	});

	it("at 60 columns the status line wraps between its parts, so the cost stays in sight", async () => {
		const tui = await startAgent([], { width: 60 });
		const screen = await tui.waitFor("$0.000");
		// Nothing was typed while it started: no hint says something was.
		expect(screen).not.toContain("Typed while starting");
		expect(screen.split("\n").slice(-2)).toEqual([
			"● ready │ kernel not started · local/coder · 0% of 33k",
			"0 tok $0.000",
		]);
		expect(overflowing(screen, 60)).toEqual([]);
	});

	it("/tree takes the editor's place: whole lines of its own, nothing of the conversation beside it", async () => {
		const answer = Array.from(
			{ length: 30 },
			(_, i) => `Line ${i + 1} of an answer that is long enough to reach the edges of the screen.`,
		).join("\n\n");
		const tui = await startAgent([{ text: answer }]);
		tui.type("tell me a lot");
		tui.keys("Enter");
		await tui.waitFor("Line 30 of");
		tui.type("/tree");
		tui.keys("Enter");
		const screen = await tui.waitFor("Session tree");
		expect(screen.split("\n").slice(-7)).toEqual([
			" Line 30 of an answer that is long enough to reach the edges of the screen.",
			"─".repeat(80),
			"Session tree · type to filter · Enter picks · Esc closes",
			"  • you: tell me a lot",
			"→ ◆ agent: Line 1 of an answer that is long enough to reach the edges of the s",
			"─".repeat(80),
			"● ready │ kernel not started · local/coder · 0% of 33k · 110 tok $0.000",
		]);
		// Esc gives the editor its place back.
		tui.keys("Escape");
		await tui.waitFor((text) => !text.includes("Session tree") && editorLines(text).join("\n") === "");
	});

	it("keeps what is typed before the first frame: it waits in the editor, unsent, until Enter", async () => {
		let before = "";
		const tui = await startAgent([{ text: "It is 42." }], {
			typeAhead: (pane) => {
				pane.type("what is six times sevem");
				pane.keys("BSpace");
				pane.type("n?");
				pane.keys("Enter");
				before = pane.screen();
			},
		});
		// Typed before the UI drew anything (the program was still loading).
		expect(before).not.toContain("kernel");
		// One line, as typed (the Backspace erased): the Enter typed blind did not send it.
		const screen = await tui.waitFor((text) => editorLines(text).join("\n") === " what is six times seven?");
		expect(screen).toContain("Typed while starting: Enter sends it.");
		expect(server?.requests.length).toBe(0);
		tui.keys("Enter");
		const answered = await tui.waitFor("It is 42.");
		expect(answered).toContain("› what is six times seven?");
		expect(server?.requests.length).toBe(1);
	});

	it("draws a starting screen at once, and the UI takes its place once the session has started", async () => {
		// A user extension holds the session's start until the test releases it.
		const hold = [
			'import { existsSync } from "node:fs";',
			'const go = new URL("./go", import.meta.url);',
			"while (!existsSync(go)) await new Promise((resolve) => setTimeout(resolve, 50));",
			"export default function () {}",
		].join("\n");
		const tui = await startAgent([{ text: "Started." }], {
			homeFiles: { "extensions/hold.mjs": hold },
			ready: "starting the session…",
		});
		const starting = tui.screen();
		expect(starting).toContain("prime-agent · starting the session ·");
		expect(starting).not.toContain("local/coder");
		tui.type("hello");
		writeFileSync(join(world?.home as string, "extensions", "go"), "");
		const ready = await tui.waitFor((screen) => screen.includes("kernel not started") && screen.includes("hello"));
		// Erased, not left above the UI.
		expect(ready).not.toContain("starting the session");
		expect(ready.match(/prime-agent ·/g)).toHaveLength(1);
	});

	it("completes a slash command from the menu with Tab", async () => {
		const tui = await startAgent([]);
		tui.type("/tr");
		await tui.waitFor(/→ tree +the session tree/);
		tui.keys("Tab");
		await tui.waitFor((screen) => /^ \/tree\s*$/m.test(screen) && !screen.includes("→ tree"));
		tui.keys("Enter");
		await tui.waitFor("The session has no messages yet.");
	});

	it("lays itself out again when the terminal is resized, narrower and wider", async () => {
		const tui = await startAgent([
			{ text: "A short answer that is long enough to wrap when the terminal gets narrow." },
		]);
		tui.type("say something");
		tui.keys("Enter");
		await tui.waitFor("A short answer that is long enough to wrap");
		tui.resize(50, 16);
		const narrow = await tui.waitFor((screen) => screen.includes("narrow.") && screen.includes("● ready"));
		expect(overflowing(narrow, 50)).toEqual([]);
		tui.resize(110, 30);
		const wide = await tui.waitFor("A short answer that is long enough to wrap when the terminal gets narrow.");
		expect(wide).toContain("kernel not started");
		expect(wide.match(/A short answer/g)).toHaveLength(1);
	});

	it("/model opens a picker over the configured models and switches to the one picked", async () => {
		const tui = await startAgent([]);
		tui.type("/model");
		tui.keys("Enter");
		await tui.waitFor(/Model · type to filter/);
		tui.type("coder-2");
		await tui.waitFor("filter: coder-2");
		tui.keys("Enter");
		// The status line is drawn after the note; tmux may be read between the two on a loaded machine.
		await tui.waitFor(
			(screen) =>
				screen.includes("Model: local/coder-2") &&
				/● ready │ kernel not started · local\/coder-2 · 0% of 66k/.test(screen),
		);
	});

	it("/new starts another session and /resume picks the earlier one of this directory", async () => {
		const tui = await startAgent([{ text: "The first answer." }]);
		tui.type("first question");
		tui.keys("Enter");
		await tui.waitFor("The first answer.");
		tui.type("/new");
		tui.keys("Enter");
		await tui.waitFor((screen) => !screen.includes("The first answer."));
		tui.type("/resume");
		tui.keys("Enter");
		await tui.waitFor(/Resume · type to filter/);
		expect(await tui.waitFor("first question")).toMatch(/first question +2 msgs$/m);
		tui.keys("Enter");
		const screen = await tui.waitFor("The first answer.");
		expect(screen).toContain("› first question");
	});

	it("SIGTERM stops the UI as leaving does: the terminal is given back and the session is saved", async () => {
		const tui = await startAgent([{ text: "Here." }]);
		const output = tui.record();
		tui.type("hello");
		tui.keys("Enter");
		await tui.waitFor("Here.");
		process.kill(tui.pid(), "SIGTERM");
		const screen = await tui.waitForExit("Session saved: resume with `prime-agent --resume");
		expect(screen).toContain("Stopped by SIGTERM.");
		// The UI hid the cursor while it drew; the last word on it shows it again, and bracketed paste is off.
		const raw = output();
		expect(raw.lastIndexOf("\x1b[?25l")).toBeGreaterThan(-1);
		expect(raw.lastIndexOf("\x1b[?25h")).toBeGreaterThan(raw.lastIndexOf("\x1b[?25l"));
		expect(raw).toContain("\x1b[?2004l");
	});

	it("runs the line chat instead when PRIME_AGENT_NO_TUI is set", async () => {
		const tui = await startAgent([], { env: { PRIME_AGENT_NO_TUI: "1" }, ready: "Type a message and press Enter." });
		tui.type("/exit");
		tui.keys("Enter");
		await tui.waitFor(() => tui.exited());
	});
});

describe("prime-agent with its output piped", () => {
	it("runs the line chat, not the terminal UI", async () => {
		world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests() });
		world.writeHome("models.json", {
			providers: { local: { baseUrl: "http://127.0.0.1:9/v1", models: [{ id: "coder" }] } },
		});
		const child = spawn(process.execPath, [CLI, "--model", "local/coder"], {
			cwd: world.project,
			env: world.env,
			stdio: ["pipe", "pipe", "pipe"],
		});
		piped = child;
		let out = "";
		let err = "";
		child.stdout.on("data", (chunk) => {
			out += chunk;
		});
		child.stderr.on("data", (chunk) => {
			err += chunk;
		});
		child.stdin.end("/exit\n");
		const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
		expect(code).toBe(0);
		expect(err).toContain("Type a message and press Enter.");
		expect(out).not.toContain("\x1b[?2026h");
	});
});
