import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Context, fauxAssistantMessage } from "@mariozechner/pi-ai";
import { useFauxSessions, wireText } from "prime-agent-test-support/faux-session";
import { localModelWorld } from "prime-agent-test-support/loopback-servers";
import { makeTempWorld, type TempWorld } from "prime-agent-test-support/temp-home";
import { expect, it, onTestFinished } from "vitest";
import {
	GATE_NOT_RERUN_TEXT,
	GATE_OUTPUT_LIMIT,
	minutesText,
	runGate,
	workspaceFingerprint,
} from "../src/autonomous/index.js";
import { runCli } from "../src/cli/index.js";
import { ExitCode } from "../src/errors.js";
import { describeOutcome } from "../src/modes/index.js";
import { longRunningOutcome } from "../src/modes/long-running.js";
import type { RunOutcome } from "../src/orchestrator/index.js";
import type { StartedSession, StartOptions } from "../src/startup/index.js";
import { alive, cell } from "./agent-scripts.js";
import { memoryIo } from "./cli-io.js";

const sessions = useFauxSessions();

const CHECK =
	"import sys\nvalue = open('value.txt').read().strip()\nprint(f'value is {value}')\nsys.exit(0 if value == 'ok' else 1)\n";

/** A real git repository with one commit: check.py passes once value.txt says "ok". */
function gitProject(): TempWorld {
	const world = sessions.newWorld();
	world.writeProject("check.py", CHECK);
	world.writeProject("value.txt", "bad\n");
	const git = (...args: string[]) => execFileSync("git", args, { cwd: world.project });
	git("init", "-q");
	git("-c", "user.email=t@t", "-c", "user.name=t", "add", ".");
	git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "start");
	return world;
}

function script(steps: (() => ReturnType<typeof fauxAssistantMessage>)[]): Context[] {
	const seen: Context[] = [];
	sessions.faux.setResponses(
		steps.map((step) => (context: Context) => {
			seen.push(JSON.parse(JSON.stringify(context)));
			return step();
		}),
	);
	return seen;
}

const text = (answer: string) => () => fauxAssistantMessage(answer);
const run = (code: string) => () => cell(code);
const lastText = (context: Context | undefined) => {
	const last = context?.messages[context.messages.length - 1];
	return last ? wireText(last) : "";
};

function killQuietly(pid: number): void {
	try {
		process.kill(pid, "SIGKILL");
	} catch {
		// Gone, as it should be.
	}
}

/** What print mode reports and exits with after the run. */
async function finish(started: StartedSession, outcome: RunOutcome) {
	await started.whenSettled();
	return longRunningOutcome(started, outcome, describeOutcome(outcome, started), undefined);
}

async function startAutonomous(flags: StartOptions["autonomous"]): Promise<StartedSession> {
	return sessions.start({ autonomous: flags });
}

it("a failing gate continues the run with its output; with no edit it is not rerun (the exact message); after an edit it reruns and passes", async () => {
	const world = gitProject();
	const runs = join(world.project, "..", "gate-runs.log");
	const seen = script([
		text("Done."),
		text("Done, really."),
		run("open('value.txt', 'w').write('ok\\n')"),
		text("Fixed value.txt."),
	]);
	const started = await startAutonomous({ gates: [`echo run >> ${runs} && python3 check.py`] });
	const outcome = await started.agentSession.prompt("make check.py pass");
	const report = await finish(started, outcome);

	expect(seen).toHaveLength(4);
	const failed = lastText(seen[1]);
	expect(failed).toContain(
		`[autonomous gate 1 of 1 failed] \`echo run >> ${runs} && python3 check.py\` exited with status 1 after`,
	);
	expect(failed).toContain("value is bad");
	const notRerun = lastText(seen[2]);
	expect(notRerun).toContain(`[autonomous gate 1 of 1 not rerun]`);
	expect(notRerun).toContain(
		"\nThe autonomous gate was not rerun because the workspace has not changed since this failure. Edit source files, tests, or a blocker artifact before attempting to finish again.\n",
	);
	expect(GATE_NOT_RERUN_TEXT).toBe(
		"The autonomous gate was not rerun because the workspace has not changed since this failure. Edit source files, tests, or a blocker artifact before attempting to finish again.",
	);
	// The gate ran for the first failure and after the edit, not for the unchanged workspace.
	expect(readFileSync(runs, "utf8")).toBe("run\nrun\n");
	expect(started.autonomous?.ending).toEqual({ status: "passed" });
	expect(report.exitCode).toBe(ExitCode.ok);
	expect(report.message?.split("\n")[0]).toMatch(
		/^Autonomous run passed: every gate passed \(1 of 1; 2 continuations, 4 turns, [\d,]+ tokens, \d+s\)\.$/,
	);
	expect(report.autonomous?.status).toBe("passed");
});

it("gate output in what the model sees is bounded to 6,000 characters and archived whole by Prime Context", async () => {
	gitProject();
	const seen = script([text("Done."), text("again")]);
	const started = await startAutonomous({
		gates: ["python3 -c \"import sys\nfor i in range(4000): print(f'line {i} of the log')\nsys.exit(2)\""],
		maxContinuations: "1",
	});
	const outcome = await started.agentSession.prompt("go");
	const report = await finish(started, outcome);
	const message = lastText(seen[1]);
	const output = message.slice(message.indexOf("Output:\n") + "Output:\n".length);
	expect(output.length).toBeLessThanOrEqual(GATE_OUTPUT_LIMIT);
	const gate = started.autonomous?.gates[0];
	expect(gate?.status).toBe("not_rerun");
	expect(gate?.observationId).toMatch(/^obs_\d{6}$/);
	const read = await started.agentSession.prompt(`/pc read ${gate?.observationId} 4000:4000`);
	expect(read.command?.message).toContain("line 3999 of the log");
	expect(report.exitCode).toBe(ExitCode.limitReached);
});

it("the continuation limit: a gate still failing when no continuation is left stops the run as a limit, exit 5", async () => {
	gitProject();
	const seen = script([text("Done."), text("Done again."), text("never")]);
	const started = await startAutonomous({ gates: ["python3 check.py"], maxContinuations: "1" });
	const outcome = await started.agentSession.prompt("go");
	const report = await finish(started, outcome);
	expect(seen).toHaveLength(2);
	expect(started.autonomous?.ending).toEqual({ status: "limit", limit: "continuations", detail: "1 of 1" });
	expect(report.exitCode).toBe(ExitCode.limitReached);
	expect(report.exitCode).toBe(5);
	const lines = report.message?.split("\n") ?? [];
	expect(lines[0]).toMatch(
		/^Autonomous run stopped: the continuation limit was reached \(1 of 1\)\. A limit is not success: the gates have not all passed \(1 continuation, 2 turns, [\d,]+ tokens, \d+s\)\.$/,
	);
	expect(lines[1]).toMatch(/^ {2}not rerun python3 check\.py \(exit 1, output obs_\d{6}\)$/);
	expect(lines[2]).toBe(
		`Go on with \`prime-agent --autonomous --resume ${started.session.id} -p "..."\`, or raise the limit: --max-continuations N (or "autonomous": {"maxContinuations": N} in settings.json).`,
	);
});

it("the turn limit: after the last allowed answer its cell runs and the run ends, reported as a limit", async () => {
	gitProject();
	const seen = script([run("a = 1"), run("b = 2"), run("c = 3"), text("never")]);
	const started = await startAutonomous({ gates: ["true"], maxTurns: "2" });
	const outcome = await started.agentSession.prompt("go");
	const report = await finish(started, outcome);
	expect(seen).toHaveLength(2);
	expect(started.autonomous?.ending).toEqual({ status: "limit", limit: "turns", detail: "2 of 2" });
	expect(report.exitCode).toBe(ExitCode.limitReached);
	expect(report.message).toContain("Autonomous run stopped: the turn limit was reached (2 of 2).");
	expect(report.message).toContain("  not run   true");
	expect(report.message).toContain(
		'or raise the limit: --max-turns N (or "autonomous": {"maxTurns": N} in settings.json).',
	);
});

it("the token limit counts input + output tokens and stops the run as a limit", async () => {
	gitProject();
	const seen = script([run("a = 1"), run("b = 2"), text("never")]);
	const started = await startAutonomous({ gates: ["true"], maxTokens: "50" });
	const outcome = await started.agentSession.prompt("go");
	const report = await finish(started, outcome);
	expect(seen).toHaveLength(1);
	const ending = started.autonomous?.ending;
	expect(ending?.status === "limit" && ending.limit).toBe("tokens");
	expect(report.exitCode).toBe(ExitCode.limitReached);
	expect(report.message).toContain("Autonomous run stopped: the token limit was reached (");
	expect(report.message).toContain(
		'or raise the limit: --max-tokens N (or "autonomous": {"maxTokens": N} in settings.json).',
	);
});

/** A run with a 0.05-minute time limit and one gate, ended by that limit; its report. */
async function runToTimeLimit(steps: (() => ReturnType<typeof fauxAssistantMessage>)[], gate: string) {
	gitProject();
	script(steps);
	const started = await startAutonomous({ gates: [gate], maxMinutes: "0.05" });
	const begun = Date.now();
	const report = await finish(started, await started.agentSession.prompt("go"));
	expect(Date.now() - begun).toBeLessThan(30_000);
	expect(started.autonomous?.ending).toEqual({ status: "limit", limit: "time", detail: "0.05 minutes" });
	expect(report.exitCode).toBe(ExitCode.limitReached);
	return report;
}

it("says a time limit in words a person writes: one minute, not one minutes", () => {
	expect([60_000, 3_000, 90 * 60_000].map(minutesText)).toEqual(["1 minute", "0.05 minutes", "90 minutes"]);
});

it("the time limit stops a run mid-cell: reported as the time limit, not as an interruption", async () => {
	const report = await runToTimeLimit([run("import time\ntime.sleep(60)"), text("never")], "true");
	expect(report.message).toContain("Autonomous run stopped: the time limit was reached (0.05 minutes).");
	expect(report.message).toContain(
		'or raise the limit: --max-minutes N (or "autonomous": {"maxMinutes": N} in settings.json).',
	);
});

it("a gate still running when the time limit is reached is stopped and reported as stopped, not as never run", async () => {
	const report = await runToTimeLimit([text("Done.")], "sleep 30");
	expect(report.message).toMatch(/\n {2}failed {4}sleep 30 \(stopped by the time limit after \d+s\)\n/);
});

it("the workspace fingerprint: equal for an unchanged tree, different after an edit, a new untracked file or its content", async () => {
	const world = gitProject();
	const print = async () => (await workspaceFingerprint(world.project)).digest;
	const first = await print();
	expect((await workspaceFingerprint(world.project)).method).toBe("git");
	expect(await print()).toBe(first);
	world.writeProject("notes.txt", "one");
	const untracked = await print();
	expect(untracked).not.toBe(first);
	world.writeProject("notes.txt", "two");
	const changed = await print();
	expect(changed).not.toBe(untracked);
	world.writeProject("value.txt", "edited\n");
	expect(await print()).not.toBe(changed);
});

it("the workspace fingerprint hashes an untracked link by its target, never reading what it points to (a FIFO, /dev/zero)", async () => {
	const world = gitProject();
	symlinkSync("/dev/zero", join(world.project, "zero"));
	execFileSync("mkfifo", [join(world.project, "pipe")]);
	const begun = Date.now();
	const first = await workspaceFingerprint(world.project);
	expect(Date.now() - begun).toBeLessThan(5_000);
	expect(first.method).toBe("git");
	expect((await workspaceFingerprint(world.project)).digest).toBe(first.digest);
	rmSync(join(world.project, "zero"));
	symlinkSync("/dev/null", join(world.project, "zero"));
	expect((await workspaceFingerprint(world.project)).digest).not.toBe(first.digest);
});

it("outside git the working tree is hashed, skipping .git, node_modules and virtual environments", async () => {
	const world = sessions.newWorld();
	world.writeProject("src/a.py", "x = 1\n");
	const print = async () => workspaceFingerprint(world.project);
	const first = await print();
	expect(first.method).toBe("walk");
	world.writeProject("node_modules/pkg/index.js", "changed");
	mkdirSync(join(world.project, "env"));
	writeFileSync(join(world.project, "env", "pyvenv.cfg"), "home = /usr\n");
	world.writeProject("env/lib/site.py", "changed");
	expect((await print()).digest).toBe(first.digest);
	world.writeProject("src/a.py", "x = 2\n");
	expect((await print()).digest).not.toBe(first.digest);
});

it("bad autonomous flags and settings are usage errors naming the value", async () => {
	const world = makeTempWorld();
	try {
		const cases: [string[], string][] = [
			[["--autonomous"], "Error: --autonomous needs a task given with -p."],
			[["-p", "x", "--gate", "true"], "Error: --gate works only with --autonomous."],
			[["-p", "x", "--max-turns", "3"], "Error: --max-turns works only with --autonomous."],
			[
				["--autonomous", "-p", "x", "--max-turns", "0"],
				'Error: --max-turns must be a whole number of 1 or more, not "0".',
			],
			[["-p", "x", "--goal-turns", "3"], "Error: --goal-turns needs --goal."],
			[
				["-p", "x", "--goal", "ship", "--goal-turns", "many"],
				'Error: --goal-turns must be a positive whole number, not "many".',
			],
		];
		for (const [argv, first] of cases) {
			const io = memoryIo(world.project, world.env);
			expect(await runCli(argv, io)).toBe(ExitCode.usage);
			expect(io.err().split("\n")[0]).toBe(first);
		}
		const turnsOnly = memoryIo(world.project, world.env);
		expect(await runCli(["-p", "x", "--goal-turns", "3"], turnsOnly)).toBe(ExitCode.usage);
		expect(turnsOnly.err().split("\n")[1]).toBe(
			'Write it as --goal "<objective>" --goal-turns N (or set the budget with /goal --turns N <objective>).',
		);
		world.writeHome("settings.json", { autonomous: { maxMinutes: -1 } });
		const io = memoryIo(world.project, world.env);
		expect(await runCli(["--autonomous", "-p", "x"], io)).toBe(ExitCode.usage);
		expect(io.err().split("\n")[0]).toBe(
			`Error: "autonomous.maxMinutes" in ${join(world.home, "settings.json")} must be a positive number of minutes, not -1.`,
		);
	} finally {
		world.cleanup();
	}
});

it("the command line: gates passed exit 0, a limit exits 5, settings give the gates, the report goes to stderr", {
	timeout: 120_000,
}, async () => {
	const { world, server } = await localModelWorld([{ text: "Done." }, { text: "Done." }, { text: "Done again." }]);
	try {
		world.writeHome("settings.json", { autonomous: { gates: ["true"] } });
		const passed = memoryIo(world.project, world.env);
		expect(await runCli(["--autonomous", "-p", "do it", "--model", "local/coder"], passed)).toBe(0);
		expect(passed.out()).toBe("Done.\n");
		expect(passed.err()).toContain("Gate 1/1 `true` passed");
		expect(passed.err()).toContain(
			"Autonomous run passed: every gate passed (1 of 1; 0 continuations, 1 turn, 110 tokens,",
		);

		const limited = memoryIo(world.project, world.env);
		const code = await runCli(
			[
				"--autonomous",
				"-p",
				"do it",
				"--model",
				"local/coder",
				"--gate",
				"false",
				"--max-continuations",
				"1",
				"--mode",
				"json",
			],
			limited,
		);
		expect(code).toBe(5);
		const result = limited
			.out()
			.trim()
			.split("\n")
			.map((line) => JSON.parse(line))
			.find((event) => event.type === "result");
		expect(result.exitCode).toBe(5);
		expect(result.autonomous.status).toBe("limit");
		expect(result.autonomous.limit).toBe("continuations");
		expect(result.autonomous.gates[0]).toMatchObject({ command: "false", status: "not_rerun", exitCode: 1 });
		expect(result.autonomous.limits).toEqual({ continuations: 1, turns: 12, tokens: 80_000, timeMs: 1_800_000 });
	} finally {
		await server.close();
		world.cleanup();
	}
});

it("the numbers and the message the README and --help state are the ones the code uses", async () => {
	const { readFileSync: read } = await import("node:fs");
	const readme = read(new URL("../README.md", import.meta.url), "utf8").replace(/\s+/g, " ");
	const { HELP } = await import("../src/cli/index.js");
	const {
		DEFAULT_AUTONOMOUS_LIMITS: limits,
		GATE_TIMEOUT_MS,
		WALK_MAX_FILES,
		WALK_HASH_MAX_BYTES,
	} = await import("../src/autonomous/index.js");
	const { IDLE_CONTINUATION_LIMIT } = await import("../src/goals/index.js");
	expect(readme).toContain(
		`(defaults): ${limits.continuations} continuations, ${limits.turns} turns, ${limits.tokens.toLocaleString("en-US")} tokens (input + output, sub-agents' included), ${limits.timeMs / 60_000} minutes`,
	);
	expect(readme).toContain(`stopped (its process group killed) after ${GATE_TIMEOUT_MS / 60_000} minutes`);
	expect(readme).toContain(`bounded to ${GATE_OUTPUT_LIMIT.toLocaleString("en-US")} characters`);
	expect(readme).toContain(`past ${WALK_MAX_FILES.toLocaleString("en-US")} files`);
	expect(readme).toContain(`files up to ${WALK_HASH_MAX_BYTES / 1024 / 1024} MiB by content`);
	expect(readme).toContain(`answers ${IDLE_CONTINUATION_LIMIT} continuations in a row without running a cell`);
	expect(readme).toContain(`told exactly: "${GATE_NOT_RERUN_TEXT}"`);
	expect(HELP.replace(/\s+/g, " ")).toContain(
		`--max-continuations ${limits.continuations}, --max-turns ${limits.turns}, --max-tokens ${limits.tokens}, --max-minutes ${limits.timeMs / 60_000}`,
	);
});

it("a gate that runs past its timeout is stopped with its whole process group and counts as failed", async () => {
	const world = sessions.newWorld();
	const logFile = join(world.home, "gates", "slow.log");
	const begun = Date.now();
	const result = await runGate("sleep 30 & echo $!; wait", {
		cwd: world.project,
		env: world.env,
		logFile,
		timeoutMs: 500,
	});
	expect(Date.now() - begun).toBeLessThan(10_000);
	expect(result).toMatchObject({ passed: false, timedOut: true, aborted: false, exitCode: null });
	const sleeper = Number(readFileSync(logFile, "utf8").trim());
	expect(sleeper).toBeGreaterThan(0);
	// Killed with its group; it may stay a zombie for a moment until init reaps it.
	for (let waited = 0; alive(sleeper) && waited < 5_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
	expect(alive(sleeper)).toBe(false);
	const stopped = new AbortController();
	setTimeout(() => stopped.abort(), 200);
	const aborted = await runGate("sleep 30", { cwd: world.project, env: world.env, logFile, signal: stopped.signal });
	expect(aborted).toMatchObject({ passed: false, timedOut: false, aborted: true });
	const missing = await runGate("true", { cwd: join(world.project, "absent"), env: world.env, logFile });
	expect(missing.passed).toBe(false);
	expect(missing.tail).toContain("[the gate could not start:");
});

it("a gate's background process is killed when the gate's shell exits, even one holding the gate's output open", async () => {
	const world = sessions.newWorld();
	const logFile = join(world.home, "gates", "background.log");
	const pidFile = join(world.project, "sleeper.pid");
	onTestFinished(() => {
		// A failed test leaves no sleeper behind.
		if (existsSync(pidFile)) killQuietly(Number(readFileSync(pidFile, "utf8")));
	});
	const begun = Date.now();
	// Without the kill, the gate would wait 300 s for the sleeper to close the output it inherited.
	const result = await runGate("sleep 300 & echo $! > sleeper.pid", { cwd: world.project, env: world.env, logFile });
	expect(Date.now() - begun).toBeLessThan(10_000);
	expect(result).toMatchObject({ passed: true, exitCode: 0, timedOut: false });
	const sleeper = Number(readFileSync(pidFile, "utf8"));
	expect(sleeper).toBeGreaterThan(0);
	for (let waited = 0; alive(sleeper) && waited < 5_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
	expect(alive(sleeper)).toBe(false);
});

it("Ctrl-C while a gate runs stops the gate and ends the run as interrupted (exit 130), not as an error", async () => {
	const world = gitProject();
	script([text("Done.")]);
	const started = await startAutonomous({ gates: ["touch started && sleep 30"] });
	const running = started.agentSession.prompt("fix value.txt");
	const marker = join(world.project, "started");
	await new Promise<void>((resolve) => {
		const check = setInterval(() => {
			if (existsSync(marker)) {
				clearInterval(check);
				resolve();
			}
		}, 20);
	});
	const begun = Date.now();
	started.agentSession.abort();
	const report = await finish(started, await running);
	expect(Date.now() - begun).toBeLessThan(10_000);
	expect(report.exitCode).toBe(ExitCode.interrupted);
	expect(report.message).toBe(
		`Interrupted. The session is saved: resume it with \`prime-agent --resume ${started.session.id}\`.`,
	);
	expect(started.autonomous?.ending).toBeUndefined();
});

it("the closing report says a gate timed out instead of giving it no exit status", async () => {
	const { autonomousReport } = await import("../src/autonomous/index.js");
	const gateLine = (status: string, durationMs: number) =>
		autonomousReport({
			gates: ["npm test"],
			results: [{ status, exitCode: null, timedOut: true, durationMs, observationId: "obs_000002" }],
			end: { status: "limit", limit: "continuations", detail: "3 of 3" },
			gatesFrom: "--gate on the command line",
			continuations: 3,
			turns: 4,
			tokens: 1200,
			elapsedMs: 900_000,
			sessionId: "s1",
		}).split("\n")[1];
	expect(gateLine("failed", 300_000)).toBe("  failed    npm test (timed out after 5m 00s, output obs_000002)");
	expect(gateLine("not_rerun", 0)).toBe("  not rerun npm test (timed out, output obs_000002)");
});

it("with a goal, an autonomous run continues the open goal first (a continuation), then runs the gates", async () => {
	gitProject();
	const seen = script([text("Done."), run('await goal.complete("value.txt was already checked")'), text("Now done.")]);
	const started = await sessions.start({ goal: { objective: "check value.txt" }, autonomous: { gates: ["true"] } });
	const outcome = await started.agentSession.prompt("go");
	const report = await finish(started, outcome);
	expect(seen).toHaveLength(3);
	expect(lastText(seen[1])).toContain("continuation] You stopped, but the goal is still open.");
	expect(started.goals.current()?.status).toBe("complete");
	expect(started.autonomous?.continuations).toBe(1);
	expect(report.exitCode).toBe(ExitCode.ok);
	expect(report.message?.split("\n")[0]).toMatch(
		/^Autonomous run passed: every gate passed \(1 of 1; 1 continuation, 3 turns,/,
	);
});

it("a goal's budget running out in an autonomous run ends it as a limit, exit 5", async () => {
	gitProject();
	const seen = script([run("a = 1"), run("b = 2"), text("never")]);
	const started = await sessions.start({
		goal: { objective: "count", turns: "1" },
		autonomous: { gates: ["true"] },
	});
	const outcome = await started.agentSession.prompt("go");
	const report = await finish(started, outcome);
	expect(seen).toHaveLength(1);
	expect(started.autonomous?.ending).toEqual({
		status: "limit",
		limit: "goal",
		detail: "turn budget reached: 1 of 1 turns used",
	});
	expect(report.exitCode).toBe(ExitCode.limitReached);
	expect(report.message).toContain(
		"Autonomous run stopped: the goal stopped (turn budget reached: 1 of 1 turns used). A limit is not success",
	);
});
