import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Context, fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { visibleWidth } from "@mariozechner/pi-tui";
import { localLink, type SessionChanges, type StartedSession, type StartOptions, UserError } from "prime-agent";
import { useFauxSessions } from "prime-agent-test-support/faux-session";
import { afterEach, describe, expect, it } from "vitest";
import { type AppExit, InteractiveApp } from "../src/app.js";
import {
	lastStatusWritten,
	screen,
	statusOf,
	submit,
	type,
	VirtualTerminal,
	visible,
	waitFor,
} from "./virtual-terminal.js";

const sessions = useFauxSessions({ models: [{ id: "faux-1" }, { id: "faux-2" }] });

/** A real failing pytest run (134 KB, two failing tests) from the fixture outputs. */
const LOG = readFileSync(
	new URL("../../../fixtures/outputs/006-attrs-validator-flip-verbose/output.txt", import.meta.url),
	"utf8",
);

interface Running {
	app: InteractiveApp;
	terminal: VirtualTerminal;
	exited: Promise<AppExit>;
	/** Every `switchSession` call, in order. */
	switches: SessionChanges[];
}

let running: Running | undefined;
/** The session the running app drives now (in this process). */
let active: StartedSession;

afterEach(() => {
	running?.app.stop();
	running = undefined;
});

/** `failFirstSwitch`: the first session switch fails as a session that cannot start does. */
async function startApp(options: Partial<StartOptions> = {}, failFirstSwitch = false): Promise<Running> {
	active = await sessions.start(options);
	const terminal = new VirtualTerminal(80, 24);
	const switches: SessionChanges[] = [];
	const app = new InteractiveApp(terminal, {
		link: localLink(active),
		env: sessions.world.env,
		paths: active.paths,
		switchSession: async (changes) => {
			switches.push(changes);
			await active.dispose();
			if (failFirstSwitch && switches.length === 1)
				throw new UserError("The session could not start.", "Check the model's server.");
			active = await sessions.start({ ...options, ...changes });
			return localLink(active);
		},
	});
	const exited = app.run();
	running = { app, terminal, exited, switches };
	return running;
}

describe("the interactive app (in process, faux model, real kernel)", () => {
	it("streams a long answer without full redraws and keeps every line within the terminal", async () => {
		const answer = Array.from({ length: 120 }, (_, i) => `Line ${i} of a long answer with **bold** words.`).join(
			"\n\n",
		);
		sessions.faux.setResponses([fauxAssistantMessage(answer)]);
		const { app, terminal } = await startApp();
		submit(terminal, "write a lot");
		await waitFor(app, "Line 119 of a long answer");
		await waitFor(app, (text) => text.includes("● ready"));
		// The first frame is drawn whole; every later frame only rewrites the lines that changed.
		expect(app.tui.fullRedraws).toBeLessThanOrEqual(1);
		terminal.resize(40, 12);
		for (const line of app.tui.render(40)) expect(visibleWidth(line)).toBeLessThanOrEqual(40);
		expect(screen(app, 40)).toContain("Line 119 of a long");
	});

	it("queues a message typed while a cell runs as steering: the model reads it after the cell", async () => {
		const contexts: Context[] = [];
		sessions.faux.setResponses([
			fauxAssistantMessage([fauxToolCall("ipython", { code: "import time\ntime.sleep(2)\nprint('slept')" })]),
			(context) => {
				contexts.push(context);
				return fauxAssistantMessage("Noted, also checking y.");
			},
		]);
		const { app, terminal } = await startApp();
		submit(terminal, "sleep a bit");
		await waitFor(app, "running (Esc interrupts)");
		submit(terminal, "also check y");
		const queued = await waitFor(app, "1 queued");
		expect(queued).toContain("queued: the agent reads it after the current step");
		await waitFor(app, "Noted, also checking y.");
		const last = contexts[0]?.messages.at(-1);
		expect(last?.role).toBe("user");
		expect(JSON.stringify(last?.content)).toContain("also check y");
		expect(screen(app)).not.toContain("queued ·");
		const roles = active.session.context().messages.map((message) => message.role);
		expect(roles).toEqual(["user", "assistant", "toolResult", "user", "assistant"]);
	});

	it("Alt+Enter while the agent works queues a follow-up: it runs after the turn would have ended", async () => {
		const contexts: Context[] = [];
		sessions.faux.setResponses([
			fauxAssistantMessage([fauxToolCall("ipython", { code: "import time\ntime.sleep(2)" })]),
			fauxAssistantMessage("First task done."),
			(context) => {
				contexts.push(context);
				return fauxAssistantMessage("Follow-up done.");
			},
		]);
		const { app, terminal } = await startApp();
		submit(terminal, "first task");
		await waitFor(app, "running (Esc interrupts)");
		type(terminal, "then this");
		terminal.send("\x1b\r");
		await waitFor(app, "queued: after this turn");
		await waitFor(app, "Follow-up done.");
		const texts = active.session
			.context()
			.messages.filter((message) => message.role === "user" || message.role === "assistant")
			.map((message) => JSON.stringify(message.content));
		expect(texts.findIndex((text) => text.includes("First task done."))).toBeLessThan(
			texts.findIndex((text) => text.includes("then this")),
		);
		expect(JSON.stringify(contexts[0]?.messages.at(-1)?.content)).toContain("then this");
	});

	it("Ctrl-C interrupts the running cell (the kernel keeps its variables); a second Ctrl-C stops the turn", async () => {
		sessions.faux.setResponses([
			fauxAssistantMessage([fauxToolCall("ipython", { code: "kept = 41\nimport time\ntime.sleep(30)" })]),
			fauxAssistantMessage([fauxToolCall("ipython", { code: "print(kept + 1)\ntime.sleep(30)" })]),
			fauxAssistantMessage("never reached"),
		]);
		const { app, terminal } = await startApp();
		submit(terminal, "run the long job");
		await waitFor(app, "running (Esc interrupts)");
		terminal.send("\x03");
		await waitFor(app, "✗ interrupted");
		// The next cell sees the variable the interrupted one set.
		await waitFor(app, (text) => /│ 42/.test(text) && text.includes("running (Esc interrupts)"));
		terminal.send("\x03");
		const stopped = await waitFor(app, "Turn stopped.");
		expect(stopped).not.toContain("never reached");
		await waitFor(app, "● ready");
		expect(app.working).toBe(false);
	});

	it("Esc interrupts the running cell too", async () => {
		sessions.faux.setResponses([
			fauxAssistantMessage([fauxToolCall("ipython", { code: "import time\ntime.sleep(30)" })]),
			fauxAssistantMessage("It was interrupted."),
		]);
		const { app, terminal } = await startApp();
		submit(terminal, "wait");
		await waitFor(app, "running (Esc interrupts)");
		terminal.send("\x1b");
		await waitFor(app, "It was interrupted.");
		expect(screen(app)).toContain("✗ interrupted");
	});

	it("shows a capsule as a card and Ctrl-O reads its archive without a model call", async () => {
		sessions.newWorld().writeProject("pytest.log", LOG);
		sessions.faux.setResponses([
			fauxAssistantMessage([fauxToolCall("ipython", { code: "print(open('pytest.log').read(), end='')" })]),
			fauxAssistantMessage("Two tests fail."),
		]);
		const { app, terminal } = await startApp();
		submit(terminal, "run the tests");
		const card = await waitFor(app, "Two tests fail.");
		expect(card).toMatch(/┌ obs_\d+ · ipython · [\d,]+ bytes · [\d,]+ lines/);
		expect(card).toMatch(/│ TEST_RESULT FAIL 2 failed/);
		expect(card).toContain("└ archived · Ctrl-O reads it here");
		const calls = sessions.faux.state.callCount;
		terminal.send("\x0f");
		const expanded = await waitFor(app, (text) => /more lines\. Next: \/pc read obs_\d+ 41:80/.test(text));
		expect(expanded).toContain("├ archive lines 1-40 of 1509:");
		expect(expanded).toMatch(/^│ 1: ={20,}/m);
		expect(sessions.faux.state.callCount).toBe(calls);
		terminal.send("\x0f");
		expect(screen(app)).toContain("└ archived · Ctrl-O reads it here");
	});

	it("offers the session's commands at run time, an extension's too, besides its own", async () => {
		sessions
			.newWorld()
			.writeProject(
				"hello.mjs",
				'export default function (api) {\n\tapi.registerCommand("hello", { description: "say hello", handler: () => "hi" });\n}\n',
			);
		const { app, terminal } = await startApp({ extensionPaths: ["hello.mjs"] });
		terminal.send("/");
		// The menu shows eight at a time, sorted; the list is the session's at this moment.
		const menu = await waitFor(app, "say hello");
		for (const name of ["compact", "exit", "fork", "hello", "model"])
			expect(menu).toMatch(new RegExp(`^ +(→ )?${name} `, "m"));
		type(terminal, "tr");
		await waitFor(app, (text) => /^ +→ tree /m.test(text) && !text.includes("compact"));
		for (let i = 0; i < 2; i++) terminal.send("\x7f");
		type(terminal, "pc");
		await waitFor(app, (text) => /^ +→ pc +Prime Context/m.test(text));
		for (let i = 0; i < 2; i++) terminal.send("\x7f");
		type(terminal, "hel");
		await waitFor(app, (text) => text.includes("hello") && !text.includes("compact"));
		terminal.send("\t");
		expect(app.editor.getText()).toBe("/hello ");
		terminal.send("\r");
		await waitFor(app, (text) => /^ hi$/m.test(text));
	});

	it("completes the first word after a command that names its arguments (/pc, /goal, an extension's)", async () => {
		sessions
			.newWorld()
			.writeProject(
				"tell.mjs",
				'export default function (api) {\n\tapi.registerCommand("tell", { description: "tell", arguments: ["joke", "story"], handler: (a) => "told " + a });\n}\n',
			);
		const { app, terminal } = await startApp({ extensionPaths: ["tell.mjs"] });
		type(terminal, "/pc doc");
		await waitFor(app, (text) => /^ +→ doctor$/m.test(text));
		terminal.send("\t");
		expect(app.editor.getText()).toBe("/pc doctor");
		app.editor.setText("");
		type(terminal, "/goal pa");
		await waitFor(app, (text) => /^ +→ pause$/m.test(text));
		terminal.send("\t");
		expect(app.editor.getText()).toBe("/goal pause");
		app.editor.setText("");
		type(terminal, "/tell s");
		await waitFor(app, (text) => /^ +→ story$/m.test(text));
		terminal.send("\t");
		expect(app.editor.getText()).toBe("/tell story");
		terminal.send("\r");
		await waitFor(app, (text) => /^ told story$/m.test(text));
	});

	it("what an extension prints with console.log or console.error shows as a note, never over the UI", async () => {
		sessions
			.newWorld()
			.writeProject(
				"noisy.mjs",
				'export default function (api) {\n\tapi.registerCommand("noisy", { handler: () => { console.log("count:", 3); console.error("oops"); } });\n}\n',
			);
		const consoleLog = console.log;
		const { app, terminal } = await startApp({ extensionPaths: ["noisy.mjs"] });
		submit(terminal, "/noisy ");
		const said = await waitFor(app, "oops");
		expect(said).toContain("\n count: 3\n\n oops\n");
		// Leaving gives the console back.
		app.stop();
		expect(console.log).toBe(consoleLog);
	});

	it("@ completes file paths of the session's directory", async () => {
		const world = sessions.newWorld();
		world.writeProject("src/parser.py", "");
		world.writeProject("setup.py", "");
		const { app, terminal } = await startApp();
		type(terminal, "look at @sr");
		await waitFor(app, (text) => /^ +→ src\/$/m.test(text));
		terminal.send("\t");
		expect(app.editor.getText()).toBe("look at @src/");
		type(terminal, "pa");
		await waitFor(app, (text) => /^ +→ parser\.py/m.test(text));
		terminal.send("\t");
		expect(app.editor.getText()).toBe("look at @src/parser.py ");
	});

	it("a failed model call says which model failed and what to do, and the next message works", async () => {
		sessions.faux.setResponses([
			fauxAssistantMessage("", { stopReason: "error", errorMessage: "Connection error." }),
			fauxAssistantMessage("Back again."),
		]);
		const { app, terminal } = await startApp();
		submit(terminal, "hello");
		const said = await waitFor(app, (text) => text.includes("\nretry.") && text.includes("● ready"));
		expect(said).toContain(
			[
				"The model faux/faux-1 at http://localhost:0 failed: Connection error. Check the",
				"model id, your key or quota, and the network (`prime-agent doctor` helps), then",
				"retry.",
			].join("\n"),
		);
		submit(terminal, "again");
		await waitFor(app, "Back again.");
	});

	it("a cell that kills the kernel shows it died, and the status line says so until the next cell", async () => {
		sessions.faux.setResponses([
			fauxAssistantMessage([fauxToolCall("ipython", { code: "import os; os._exit(1)" })]),
			fauxAssistantMessage("The kernel died."),
			fauxAssistantMessage([fauxToolCall("ipython", { code: "print(1 + 1)" })]),
			fauxAssistantMessage("Two."),
		]);
		const { app, terminal } = await startApp();
		submit(terminal, "crash it");
		const died = await waitFor(app, (text) => text.includes("The kernel died.") && text.includes("● ready"));
		expect(died).toMatch(/^✗ kernel died ipython \d+\.\ds$/m);
		expect(died).toContain("● ready │ kernel died · faux/faux-1");
		submit(terminal, "again");
		const again = await waitFor(app, (text) => text.includes("Two.") && text.includes("● ready"));
		expect(again).toContain("● ready │ kernel idle · faux/faux-1");
	});

	it("an unknown command says which ones exist; a local command runs at once", async () => {
		const { app, terminal } = await startApp();
		submit(terminal, "/nonsense");
		const said = await waitFor(app, "Unknown command /nonsense");
		expect(said).toContain("/compact");
		submit(terminal, "/fork");
		await waitFor(app, "Nothing to fork yet: send a message first.");
	});

	it("/tree goes back before a message: its text returns to the editor and the next message branches", async () => {
		sessions.faux.setResponses([
			fauxAssistantMessage("first answer"),
			fauxAssistantMessage("second answer"),
			fauxAssistantMessage("another answer"),
		]);
		const { app, terminal } = await startApp();
		submit(terminal, "first question");
		await waitFor(app, "first answer");
		submit(terminal, "second question");
		await waitFor(app, "second answer");
		submit(terminal, "/tree");
		await waitFor(app, () => visible(terminal.written).includes("Session tree"));
		// From the newest entry, up to "you: second question", and pick it.
		terminal.send("\x1b[A");
		terminal.send("\r");
		await waitFor(app, "Back before that message");
		expect(app.editor.getText()).toBe("second question");
		expect(screen(app)).not.toContain("second answer");
		app.editor.setText("another question");
		terminal.send("\r");
		await waitFor(app, "another answer");
		const users = active.session.entries.filter((entry) => entry.type === "message" && entry.message.role === "user");
		expect(users).toHaveLength(3);
		expect(users[1]?.parentId).toBe(users[2]?.parentId);
	});

	it("/model with a name starts the session again on that model, keeping the conversation", async () => {
		sessions.faux.setResponses([fauxAssistantMessage("hello"), fauxAssistantMessage("hello from two")]);
		const { app, terminal, switches } = await startApp();
		submit(terminal, "hi");
		await waitFor(app, "hello");
		const path = active.session.path;
		const at = active.session.leafId as string;
		submit(terminal, "/model faux/faux-2");
		await waitFor(app, "Model: faux/faux-2");
		// Resumed where the conversation is (after `/tree`, not where the file ends).
		expect(switches).toEqual([{ model: "faux/faux-2", resume: path, at }]);
		expect(active.session.path).toBe(path);
		expect(screen(app)).toContain("› hi");
		expect(screen(app)).toContain("faux/faux-2 ·");
	});

	it("a model without a key is refused before anything stops; a session that cannot start is reported and the previous one resumed", async () => {
		sessions.faux.setResponses([fauxAssistantMessage("hello")]);
		const { app, terminal, switches } = await startApp({}, true);
		submit(terminal, "hi");
		await waitFor(app, "hello");
		submit(terminal, "/model nowhere/none");
		await waitFor(app, 'Unknown provider "nowhere" in --model nowhere/none.');
		expect(switches).toHaveLength(0);
		const at = active.session.leafId as string;
		const path = active.session.path;
		submit(terminal, "/model faux/faux-2");
		const said = await waitFor(app, "Switching to faux/faux-2 failed: The session could not start.");
		expect(said).toContain("› hi");
		expect(switches).toEqual([
			{ model: "faux/faux-2", resume: path, at },
			{ model: "faux/faux-1", resume: path, at },
		]);
		expect(screen(app)).toContain("faux/faux-1 ·");
	});

	it("Ctrl-D on an empty editor leaves; with text it does not; Ctrl-C twice on an empty editor leaves", async () => {
		const first = await startApp();
		type(first.terminal, "draft");
		first.terminal.send("\x04");
		expect(first.app.editor.getText()).toBe("draft");
		first.terminal.send("\x03");
		expect(first.app.editor.getText()).toBe("");
		first.terminal.send("\x04");
		expect(await first.exited).toEqual({ code: 0 });

		const second = await startApp();
		second.terminal.send("\x03");
		await waitFor(second.app, "Ctrl-C again (or Ctrl-D) leaves.");
		second.terminal.send("\x03");
		expect(await second.exited).toEqual({ code: 0 });
	});

	it("the status line shows the active goal; /goal comes from the session like every command", async () => {
		const { app, terminal } = await startApp();
		submit(terminal, "/goal make the tests pass");
		const shown = await waitFor(app, "goal: make the tests pass");
		expect(shown).toMatch(/Goal \S+ set/);
		submit(terminal, "/goal pause");
		await waitFor(app, (text) => text.includes("paused") && !text.includes("goal: make the tests pass"));
	});

	it("the editor keeps a history (Up recalls) and takes several lines (Alt+Enter)", async () => {
		sessions.faux.setResponses([fauxAssistantMessage("one"), fauxAssistantMessage("two")]);
		const { app, terminal } = await startApp();
		type(terminal, "first line");
		terminal.send("\x1b\r");
		type(terminal, "second line");
		expect(app.editor.getText()).toBe("first line\nsecond line");
		terminal.send("\r");
		await waitFor(app, (text) => /^ one$/m.test(text));
		expect(screen(app)).toContain("› first line\n  second line");
		terminal.send("\x1b[A");
		expect(app.editor.getText()).toBe("first line\nsecond line");
	});

	it("a large paste stays one marker in the editor and reaches the model whole", async () => {
		const contexts: Context[] = [];
		sessions.faux.setResponses([
			(context) => {
				contexts.push(context);
				return fauxAssistantMessage("got it");
			},
		]);
		const { app, terminal } = await startApp();
		const pasted = Array.from({ length: 40 }, (_, i) => `pasted line ${i + 1}`).join("\n");
		terminal.send(`\x1b[200~${pasted}\x1b[201~`);
		expect(app.editor.getText()).toBe("[paste #1 +40 lines]");
		terminal.send("\r");
		const shown = await waitFor(app, "got it");
		expect(JSON.stringify(contexts[0]?.messages.at(-1)?.content)).toContain("pasted line 40");
		expect(shown).toContain("… 28 more lines");
	});

	it("a cell that ignores the interrupt asks whether to wait or restart the kernel; restart ends it", async () => {
		sessions.faux.setResponses([
			fauxAssistantMessage([
				fauxToolCall("ipython", {
					code: "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('SIGINT ignored', flush=True)\ntime.sleep(60)",
				}),
			]),
			(context) => {
				contexts.push(context);
				return fauxAssistantMessage("The kernel was restarted.");
			},
		]);
		const contexts: Context[] = [];
		const { app, terminal } = await startApp();
		submit(terminal, "stubborn");
		// Interrupt only once the cell ignores SIGINT: sooner, the interrupt ends it as usual.
		await waitFor(app, "SIGINT ignored");
		terminal.send("\x03");
		// The question takes the editor's place, above the status line, with lines of its own.
		const asked = await waitFor(app, "The cell ignored the interrupt and is still running");
		expect(asked.split("\n").slice(-6, -1)).toEqual([
			"─".repeat(80),
			"The cell ignored the interrupt and is still running · type to filter · Enter ...",
			"→ Wait for it         the kernel keeps its variables",
			"  Restart the kernel  its variables are lost",
			"─".repeat(80),
		]);
		expect(asked.split("\n").at(-1)).toMatch(/^● working │ /);
		terminal.send("\x1b[B");
		terminal.send("\r");
		const screen = await waitFor(app, "The kernel was restarted.");
		expect(screen).toContain("● ready │ kernel restarted ·");
		expect(app.showingPanel).toBe(false);
		// The model reads that its variables are gone, not that the kernel kept its state.
		const result = JSON.stringify(contexts[0]?.messages.at(-1));
		expect(result).toContain("the cell ignored the interrupt, so the kernel was killed");
		expect(result).not.toContain("the kernel kept its state");
	});

	it("after 'Wait for it' the status line says the kernel is busy until the cell that ignored the interrupt ends", {
		timeout: 120_000,
	}, async () => {
		const release = join(sessions.world.project, "release");
		sessions.faux.setResponses([
			fauxAssistantMessage([
				fauxToolCall("ipython", {
					code: `import os, signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('SIGINT ignored', flush=True)\nwhile not os.path.exists(${JSON.stringify(release)}):\n    time.sleep(0.05)`,
				}),
			]),
			fauxAssistantMessage("Left it running."),
		]);
		const { app, terminal } = await startApp();
		submit(terminal, "stubborn");
		await waitFor(app, "SIGINT ignored", 60_000);
		terminal.send("\x03");
		await waitFor(
			app,
			() => visible(terminal.written).includes("The cell ignored the interrupt and is still running"),
			60_000,
		);
		terminal.send("\r");
		const waiting = await waitFor(app, (text) => text.includes("Left it running.") && text.includes("● ready"), 60_000);
		expect(statusOf(waiting)).toMatch(/^● ready │ kernel busy · faux\/faux-1 · /);
		writeFileSync(release, "");
		const ended = await waitFor(app, (text) => statusOf(text).includes("kernel idle"), 60_000);
		expect(statusOf(ended)).toMatch(/^● ready │ kernel idle · faux\/faux-1 · /);
	});

	it("leaving ends the session in this process: the last status line drawn says it stopped, not what ran", async () => {
		sessions.faux.setResponses([
			fauxAssistantMessage([
				fauxToolCall("ipython", { code: "import time\nprint('working', flush=True)\ntime.sleep(60)" }),
			]),
		]);
		const { app, terminal, exited } = await startApp();
		submit(terminal, "run it");
		const busy = await waitFor(app, (text) => text.includes("│ working") && statusOf(text).includes("kernel busy"));
		expect(statusOf(busy)).toMatch(/^● working │ kernel busy · faux\/faux-1 · /);
		terminal.send("\x04");
		expect(await exited).toEqual({ code: 0 });
		expect(lastStatusWritten(terminal)).toMatch(/^● stopped │ kernel stopped · faux\/faux-1 · /);
	});
});
