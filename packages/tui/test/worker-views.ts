/**
 * The terminal UI over a background worker, for tests: the real `runUiInWorker` and `runAttach`,
 * drawing on a virtual terminal. Every view shown is remembered; `leaveViews` (in `afterEach`)
 * stops each and leaves its worker.
 */
import type { InteractiveContext, InteractiveUi } from "prime-agent";
import type { DaemonWorld } from "prime-agent-test-support/daemon-world";
import { daemonPaths, readWorkerRecord, runAttach, runUiInWorker } from "../../agent/src/daemon/index.js";
import { InteractiveApp } from "../src/app.js";
import { submit, VirtualTerminal, waitFor } from "./virtual-terminal.js";

export interface View {
	app: InteractiveApp;
	terminal: VirtualTerminal;
	context: InteractiveContext;
	/** Resolves with the exit code, the exit's message and what the link said on leaving. */
	done: Promise<{ code: number; message?: string; said: string }>;
}

const views: View[] = [];

/** Stop every view shown and leave its worker (a link left open would follow the worker's death at teardown). */
export async function leaveViews(): Promise<void> {
	for (const view of views.splice(0)) {
		view.app.stop();
		await view.app.link.close().catch(() => "");
	}
}

/** A UI package whose `runInteractiveMode` draws on a virtual terminal; `view` resolves once it runs. */
function virtualUi(): { ui: InteractiveUi; view: Promise<Omit<View, "done">>; message: () => string | undefined } {
	let message: string | undefined;
	let shown: (view: Omit<View, "done">) => void = () => {};
	const view = new Promise<Omit<View, "done">>((resolve) => {
		shown = resolve;
	});
	const ui: InteractiveUi = {
		runInteractiveMode: async (context) => {
			const terminal = new VirtualTerminal(80, 24);
			const app = new InteractiveApp(terminal, context);
			const exited = app.run();
			shown({ app, terminal, context });
			const exit = await exited;
			if ("message" in exit) message = exit.message;
			return exit.code as 0;
		},
	};
	return { ui, view, message: () => message };
}

async function show(run: (ui: InteractiveUi) => Promise<number>): Promise<View> {
	const { ui, view, message } = virtualUi();
	const done = run(ui);
	const shown = await Promise.race([
		view,
		done.then((code) => {
			throw new Error(`the UI never started (exit ${code})`);
		}),
	]);
	const result: View = {
		...shown,
		done: done.then((code) => ({ code, message: message(), said: shown.app.farewell })),
	};
	views.push(result);
	return result;
}

export function io(current: DaemonWorld) {
	return {
		cwd: current.project,
		env: current.env,
		stdin: process.stdin,
		stdout: process.stdout,
		stderr: process.stderr,
	};
}

/** `prime-agent` on a terminal: the UI over a new resident worker. */
export function startView(current: DaemonWorld, options: { extensionPaths?: string[] } = {}): Promise<View> {
	return show((ui) => runUiInWorker({ cwd: current.project, model: "local/coder", ...options }, ui, io(current)));
}

/** `prime-agent attach <key>` on a terminal. */
export function attachView(current: DaemonWorld, key: string): Promise<View> {
	return show((ui) => runAttach(key, io(current), ui));
}

/** Submits `prompt` in `view` and waits for `answer` and the end of the turn. */
export async function ask(view: View, prompt: string, answer: string): Promise<void> {
	submit(view.terminal, prompt);
	await waitFor(view.app, answer);
	await waitFor(view.app, "● ready");
}

/** A view over a new agent that has answered "hi" with "hello", and its worker's pid. */
export async function viewAfterHello(current: DaemonWorld): Promise<{ view: View; key: string; pid: number }> {
	const view = await startView(current);
	const key = view.app.link.agentKey as string;
	await ask(view, "hi", "hello");
	return { view, key, pid: readWorkerRecord(daemonPaths(current.home), key)?.pid as number };
}

/** The agent `key` as `prime-agent agents` shows it. */
export async function agent(current: DaemonWorld, key: string) {
	const found = (await current.agents()).find((info) => info.key === key);
	if (!found) throw new Error(`no agent ${key}`);
	return found;
}

/** How many times `text` occurs in `screen`. */
export function count(screenText: string, text: string): number {
	return screenText.split(text).length - 1;
}
