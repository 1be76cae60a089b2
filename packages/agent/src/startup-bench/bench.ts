#!/usr/bin/env node
/**
 * `npm run bench:startup [-- --runs N] [-- --only tui|print]`: how long `prime-agent` takes to
 * be usable. The built command line runs on a real terminal (a pseudo-terminal) against a
 * loopback OpenAI-compatible model, in a throwaway agent home, three ways: in this process
 * (PRIME_AGENT_IN_PROCESS=1), through the daemon with no supervisor running (cold: it starts one),
 * and through the daemon with its supervisor running and its spare worker loaded (warm). For the terminal UI it times the
 * starting screen (drawn before the session has started), the first frame (the session's model shown), the first answer token of a prompt typed as soon as
 * the frame shows, and a `/model` switch after a turn that ran a cell (the kernel's variables are
 * saved and restored) and 2 s of reading its answer; for `-p`, the first answer token. Runs alternate between the ways, so a
 * load that comes and goes touches each alike. Prints medians and ranges; asserts nothing.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { resolveKernelPython } from "prime-agent-kernel";
import { connectSupervisor, daemonContext, daemonPaths, isSameProcess } from "../daemon/index.js";
import { readJson } from "../daemon/state.js";
import { AFTER_CELL, FIRST_WORD, LAST_WORD, startModelServer } from "./model-server.js";
import { TerminalRun } from "./terminal.js";

const CLI = fileURLToPath(new URL("../cli/main.js", import.meta.url));

type Way = "in process" | "daemon, cold" | "daemon, warm";
const WAYS: Way[] = ["in process", "daemon, cold", "daemon, warm"];

interface Figures {
	[figure: string]: number[];
}

function option(name: string): string | undefined {
	const at = process.argv.indexOf(`--${name}`);
	return at < 0 ? undefined : process.argv[at + 1];
}

const RUNS = Number(option("runs") ?? 5);
/** How long the "user" reads the cell's answer before `/model`. */
const READING_MS = 2000;
const ONLY = option("only");

/** The terminal UI: first frame, first answer token, then a cell and a `/model` switch; leaves with Ctrl-D. */
async function timeUi(world: World, way: Way, figures: Figures): Promise<void> {
	const run = world.launch(way, ["--model", "local/coder"]);
	try {
		// The terminal UI's starting screen (drawn while the session starts), then its first frame.
		const screen = await run.waitFor("starting the session");
		const frame = await run.waitFor("local/coder");
		const key = await agentKey(run, way);
		const asked = await run.type("say hi\r");
		const token = await run.waitFor(FIRST_WORD, run.shown);
		// The answer's last word: the turn ends with it, and the next prompt starts a turn of its own.
		await run.waitFor(LAST_WORD, token.end);
		await run.type("please compute\r");
		await run.waitFor(AFTER_CELL, run.shown);
		// A user reads the answer before switching: the UI loads what `/model` uses once it is idle.
		await new Promise((resolve) => setTimeout(resolve, READING_MS));
		const switching = await run.type("/model local/other\r");
		const switched = await run.waitFor("Model: local/other", run.shown);
		record(figures, `${way}: starting screen`, screen.at);
		record(figures, `${way}: first frame`, frame.at);
		record(figures, `${way}: first answer token (prompt typed at the first frame)`, token.at);
		record(figures, `${way}: answer token after the prompt`, token.at - asked);
		record(figures, `${way}: /model switch`, switched.at - switching);
		await run.type("\x04");
		await Promise.race([run.exited, new Promise((resolve) => setTimeout(resolve, 30_000))]);
		if (key) await world.stopAgent(key);
	} finally {
		run.kill();
	}
}

/** `-p`: the first answer token on stdout. */
async function timePrint(world: World, way: Way, figures: Figures): Promise<void> {
	const run = world.launch(way, ["--model", "local/coder", "-p", "say hi"]);
	try {
		const token = await run.waitFor(FIRST_WORD);
		record(figures, `${way}: -p first answer token`, token.at);
		await Promise.race([run.exited, new Promise((resolve) => setTimeout(resolve, 30_000))]);
	} finally {
		run.kill();
	}
}

/** The daemon's agent key the UI's header names (`· agent <key>`); none in process. */
async function agentKey(run: TerminalRun, way: Way): Promise<string | undefined> {
	if (way === "in process") return undefined;
	const shown = await run.waitFor(/agent\s+[0-9a-f]{8}/);
	return shown.text.replace(/^agent\s+/, "");
}

function record(figures: Figures, figure: string, ms: number): void {
	figures[figure] ??= [];
	(figures[figure] as number[]).push(ms);
}

interface World {
	launch(way: Way, args: string[]): TerminalRun;
	/** Before a run: the supervisor stopped (cold) or running (warm). */
	prepare(way: Way): Promise<void>;
	stopAgent(key: string): Promise<void>;
	close(): Promise<void>;
}

async function makeWorld(): Promise<World> {
	const python = resolveKernelPython(process.env);
	const server = await startModelServer();
	const root = mkdtempSync(join(tmpdir(), "prime-startup-bench-"));
	const home = join(root, "home");
	const project = join(root, "project");
	mkdirSync(home, { mode: 0o700 });
	mkdirSync(project);
	writeFileSync(
		join(home, "models.json"),
		JSON.stringify({
			providers: {
				local: { baseUrl: server.baseUrl, api: "openai-completions", models: [{ id: "coder" }, { id: "other" }] },
			},
		}),
		{ mode: 0o600 },
	);
	const env: NodeJS.ProcessEnv = {
		PATH: process.env.PATH,
		HOME: root,
		PRIME_AGENT_DIR: home,
		PRIME_AGENT_KERNEL_PYTHON: python,
	};
	const context = daemonContext(env);
	return {
		launch: (way, args) =>
			new TerminalRun(python, [process.execPath, CLI, ...args], {
				cwd: project,
				env: way === "in process" ? { ...env, PRIME_AGENT_IN_PROCESS: "1" } : env,
			}),
		prepare: async (way) => {
			if (way === "in process") return;
			if (way === "daemon, warm") {
				// Warm: the supervisor runs and its spare worker has loaded (a user starting the next
				// session seconds after the last one, not within the second the spare takes to load).
				const supervisor = await connectSupervisor(context);
				try {
					const deadline = Date.now() + 60_000;
					while (Date.now() < deadline) {
						const status = await supervisor?.request({ type: "status" });
						if (!status?.ok || status.data?.spare !== "loading") break;
						await new Promise((resolve) => setTimeout(resolve, 100));
					}
				} finally {
					supervisor?.close();
				}
				return;
			}
			await stopDaemon();
		},
		stopAgent: async (key) => {
			const supervisor = await connectSupervisor(context, false);
			if (!supervisor) return;
			try {
				await supervisor.request({ type: "stop", key });
			} finally {
				supervisor.close();
			}
		},
		close: async () => {
			await stopDaemon().catch(() => undefined);
			await server.close();
			rmSync(root, { recursive: true, force: true });
		},
	};

	/** Stop the supervisor and its workers (they save their sessions) and wait until it is gone. */
	async function stopDaemon(): Promise<void> {
		const supervisor = await connectSupervisor(context, false);
		if (!supervisor) return;
		const holder = readJson<{ pid: number; startId: string }>(daemonPaths(home).supervisor);
		try {
			await supervisor.request({ type: "stop_all" });
		} finally {
			supervisor.close();
		}
		while (holder && isSameProcess(holder.pid, holder.startId)) await new Promise((resolve) => setTimeout(resolve, 50));
	}
}

function median(values: number[]): number {
	const sorted = [...values].sort((a, b) => a - b);
	const middle = Math.floor(sorted.length / 2);
	return sorted.length % 2
		? (sorted[middle] as number)
		: ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const load = () =>
	loadavg()
		.map((value) => value.toFixed(1))
		.join(" ");

const world = await makeWorld();
// Stopped by hand: the daemon and the throwaway home go too (the terminals close with this process).
for (const signal of ["SIGINT", "SIGTERM"] as const)
	process.once(signal, () => void world.close().finally(() => process.exit(130)));
const figures: Figures = {};
console.log(
	`prime-agent start-up: ${RUNS} runs of each way, alternating (Node ${process.version}; ${cpus().length} cores; load average ${load()})`,
);
try {
	for (let round = 0; round < RUNS; round++) {
		for (const way of WAYS) {
			if (ONLY !== "print") {
				await world.prepare(way);
				await timeUi(world, way, figures);
			}
			if (ONLY !== "tui") {
				await world.prepare(way);
				await timePrint(world, way, figures);
			}
		}
		process.stdout.write(`  round ${round + 1} of ${RUNS} done (load average ${load()})\n`);
	}
} finally {
	await world.close();
}
const width = Math.max(...Object.keys(figures).map((name) => name.length));
console.log(`${"".padEnd(width)}  median   (fastest – slowest)`);
for (const [name, values] of Object.entries(figures))
	console.log(
		`${name.padEnd(width)}  ${seconds(median(values)).padStart(7)}  (${seconds(Math.min(...values))} – ${seconds(Math.max(...values))})`,
	);
console.log(`Load average at the end: ${load()}`);
