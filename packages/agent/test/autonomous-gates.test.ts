import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type Context, fauxAssistantMessage } from "@mariozechner/pi-ai";
import { makeDaemonWorld } from "prime-agent-test-support/daemon-world";
import { useFauxSessions } from "prime-agent-test-support/faux-session";
import { localModelWorld } from "prime-agent-test-support/loopback-servers";
import { expect, it, onTestFinished } from "vitest";
import { GATE_DRAIN_MS, runGate } from "../src/autonomous/index.js";
import { runCli } from "../src/cli/index.js";
import { ExitCode } from "../src/errors.js";
import { describeOutcome } from "../src/modes/index.js";
import { longRunningOutcome } from "../src/modes/long-running.js";
import { memoryIo } from "./cli-io.js";

// How gates end: never a hang on what they leave running, and a gate that cannot run its command
// ends the run at once. (autonomous.test.ts has the run's other contracts.)

const sessions = useFauxSessions();

function killQuietly(pid: number): void {
	try {
		process.kill(pid, "SIGKILL");
	} catch {
		// Gone, as it should be.
	}
}

/** Whether any process (a zombie included) of process group `pgid` is left. */
function groupAlive(pgid: number): boolean {
	try {
		process.kill(-pgid, 0);
		return true;
	} catch {
		return false;
	}
}

async function waitUntil(done: () => boolean, ms: number): Promise<void> {
	for (let waited = 0; !done() && waited < ms; waited += 50) await new Promise((r) => setTimeout(r, 50));
}

/** What this machine's `sh` says when it cannot run `command` (dash, bash and macOS word it differently). */
function shellSays(command: string, cwd: string): string {
	const lines = spawnSync("sh", ["-c", command], { cwd, encoding: "utf8" }).stderr.trim().split("\n");
	return lines[lines.length - 1] ?? "";
}

/**
 * A gate's shell part that starts a process of its own session (as a daemonised dev server does),
 * which holds the gate's stdout and stderr for 200 s, and goes on once that process has left the
 * gate's process group (it writes its pid to `pidFile` then).
 */
function escapee(pidFile: string): string {
	const python = `import os, time; os.setsid(); open('${pidFile}', 'w').write(str(os.getpid())); time.sleep(200)`;
	return `python3 -c "${python}" & while [ ! -s ${pidFile} ]; do sleep 0.05; done`;
}

it("a gate's result is decided when its shell exits: a process that left its group and holds its output is not waited for, at its exit or its timeout", async () => {
	const world = sessions.newWorld();
	const pidFiles = ["exits.pid", "times-out.pid"].map((name) => join(world.project, name));
	onTestFinished(() => {
		for (const file of pidFiles) if (existsSync(file)) killQuietly(Number(readFileSync(file, "utf8")));
	});
	const options = { cwd: world.project, env: world.env, logFile: join(world.home, "gates", "escapee.log") };
	let begun = Date.now();
	const exited = await runGate(`${escapee(pidFiles[0] as string)}; echo gate done; exit 1`, options);
	// Waiting for the escaped process would take its 200 s.
	expect(Date.now() - begun).toBeLessThan(20_000);
	expect(exited).toMatchObject({ exitCode: 1, passed: false, timedOut: false, aborted: false, cannotRun: false });
	expect(exited.tail).toBe("gate done\n");
	expect(readFileSync(options.logFile, "utf8")).toBe("gate done\n");

	begun = Date.now();
	const timedOut = await runGate(`${escapee(pidFiles[1] as string)}; sleep 60`, { ...options, timeoutMs: 1_000 });
	expect(Date.now() - begun).toBeLessThan(20_000);
	expect(timedOut).toMatchObject({ exitCode: null, passed: false, timedOut: true, cannotRun: false });
	const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8").replace(/\s+/g, " ");
	expect(GATE_DRAIN_MS).toBe(1_000);
	expect(readme).toContain("(the gate's output is read for at most a second after its shell exits)");
});

it("prime-agent --autonomous with a gate that leaves `sleep 200 &` running ends in seconds, and no process of the gate's group survives", {
	timeout: 120_000,
}, async () => {
	const { world, server } = await localModelWorld(Array.from({ length: 5 }, () => ({ text: "Done." })));
	const pgidFile = join(world.home, "gate.pgid");
	onTestFinished(async () => {
		// A failed test leaves nothing of the gate behind.
		killRecordedGroup(pgidFile);
		await server.close();
		world.cleanup();
	});
	const gate = `echo $$ > ${pgidFile}; sleep 200 & exit 1`;
	const io = memoryIo(world.project, world.env);
	const argv = ["--autonomous", "-p", "go", "--model", "local/coder", "--max-minutes", "0.3", "--gate", gate];
	const begun = Date.now();
	expect(await runCli(argv, io)).toBe(ExitCode.limitReached);
	expect(Date.now() - begun).toBeLessThan(60_000);
	// The first answer and three continuations: the gate failed, then was not rerun on an unchanged workspace.
	expect(server.requests).toHaveLength(4);
	expect(io.err()).toContain(`Gate 1/1 \`${gate}\` failed (exit 1, `);
	expect(io.err()).toContain("Autonomous run stopped: the continuation limit was reached (3 of 3).");
	// The shell led the gate's process group; its `sleep 200` was a member (killed: at most a zombie for a moment).
	const pgid = Number(readFileSync(pgidFile, "utf8"));
	expect(pgid).toBeGreaterThan(0);
	await waitUntil(() => !groupAlive(pgid), 5_000);
	expect(groupAlive(pgid)).toBe(false);
});

it("a gate that cannot run its command ends the run at its first run with a configuration error naming the gate: one model call, exit 2", async () => {
	const world = sessions.newWorld();
	const seen: Context[] = [];
	sessions.faux.setResponses(
		["Done.", "never"].map((answer) => (context: Context) => {
			seen.push(context);
			return fauxAssistantMessage(answer);
		}),
	);
	const started = await sessions.start({ autonomous: { gates: ["true", "nonexistent-cmd-xyz --check"] } });
	const outcome = await started.agentSession.prompt("go");
	await started.whenSettled();
	const report = longRunningOutcome(started, outcome, describeOutcome(outcome, started), undefined);

	expect(seen).toHaveLength(1);
	const said = shellSays("nonexistent-cmd-xyz --check", world.project);
	expect(said).toContain("nonexistent-cmd-xyz: ");
	const detail = `exited with status 127 (not found): ${JSON.stringify(said)}`;
	expect(started.autonomous?.ending).toEqual({ status: "gate_error", gate: 1, detail });
	expect(started.autonomous?.continuations).toBe(0);
	expect(report.exitCode).toBe(ExitCode.usage);
	expect(report.exitCode).toBe(2);
	const lines = report.message?.split("\n") ?? [];
	expect(lines).toHaveLength(4);
	expect(lines[0]).toMatch(
		/^Autonomous run stopped: gate 2 of 2 cannot run, a configuration error the model cannot fix: /,
	);
	expect(lines[0]).toContain(`: \`nonexistent-cmd-xyz --check\` ${detail} (0 continuations, 1 turn, `);
	expect(lines[1]).toMatch(/^ {2}passed {4}true \(\d+s\)$/);
	expect(lines[2]).toBe("  failed    nonexistent-cmd-xyz --check (cannot run, exit 127)");
	expect(lines[3]).toBe(
		`Fix the gate's command in --gate on the command line (the command and its interpreter must be installed, on PATH and executable: try it in a shell in the project folder), then go on with \`prime-agent --autonomous --resume ${started.session.id} -p "..."\`.`,
	);
	expect(report.autonomous).toMatchObject({ status: "gate_error", gate: 1, detail });
	expect(started.autonomous?.gates[1]).toMatchObject({ status: "failed", exitCode: 127, cannotRun: true });
});

it("which gates cannot run: exit 126 and 127, a shell that cannot start; not a gate that fails saying 'not found' or exits 2", async () => {
	const world = sessions.newWorld();
	world.writeProject("check.sh", "#!/bin/sh\nexit 0\n");
	const logFile = join(world.home, "gates", "kinds.log");
	const gate = (command: string, cwd = world.project) => runGate(command, { cwd, env: world.env, logFile });
	expect(await gate("./check.sh")).toMatchObject({ exitCode: 126, cannotRun: true });
	expect(await gate("exit 127")).toMatchObject({ exitCode: 127, cannotRun: true });
	expect(await gate("true", join(world.project, "absent"))).toMatchObject({ exitCode: null, cannotRun: true });
	expect(await gate("echo 'fixture not found' >&2; exit 1")).toMatchObject({ exitCode: 1, cannotRun: false });
	expect(await gate("python3 absent.py")).toMatchObject({ exitCode: 2, cannotRun: false });
});

it("the command line prints a gate that cannot run as a configuration error and exits 2, in print and JSON modes; the fix names settings.json", {
	timeout: 120_000,
}, async () => {
	const { world, server } = await localModelWorld([{ text: "Done." }, { text: "Done." }, { text: "never" }]);
	onTestFinished(async () => {
		await server.close();
		world.cleanup();
	});
	world.writeProject("check.sh", "#!/bin/sh\nexit 0\n");
	world.writeHome("settings.json", { autonomous: { gates: ["./check.sh"] } });
	const settings = join(world.home, "settings.json");
	const said = shellSays("./check.sh", world.project);
	const printed = memoryIo(world.project, world.env);
	expect(await runCli(["--autonomous", "-p", "go", "--model", "local/coder"], printed)).toBe(ExitCode.usage);
	expect(server.requests).toHaveLength(1);
	expect(printed.out()).toBe("Done.\n");
	const err = printed.err().split("\n");
	expect(err).toContain(`Gate 1/1 \`./check.sh\` cannot run (exit 126, 0s)`);
	const report = err.findIndex((line) => line.startsWith("Autonomous run stopped: "));
	expect(err[report]).toMatch(
		/^Autonomous run stopped: gate 1 of 1 cannot run, a configuration error the model cannot fix: `\.\/check\.sh` exited with status 126 \(found but not executable\): /,
	);
	expect(err[report]).toContain(`(found but not executable): ${JSON.stringify(said)} (0 continuations, 1 turn, `);
	expect(err[report + 1]).toBe("  failed    ./check.sh (cannot run, exit 126)");
	expect(err[report + 2]).toMatch(
		new RegExp(
			`^Fix the gate's command in "autonomous\\.gates" in ${settings.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} \\(the command and its interpreter`,
		),
	);
	expect(err.slice(report + 3)).toEqual([""]);

	const json = memoryIo(world.project, world.env);
	expect(await runCli(["--autonomous", "-p", "go", "--model", "local/coder", "--mode", "json"], json)).toBe(2);
	expect(server.requests).toHaveLength(2);
	const events = json
		.out()
		.trim()
		.split("\n")
		.map((line) => JSON.parse(line));
	expect(events.find((event) => event.type === "autonomous_end")).toEqual({
		type: "autonomous_end",
		status: "gate_error",
	});
	const result = events.find((event) => event.type === "result");
	expect(result.exitCode).toBe(2);
	expect(result.autonomous).toMatchObject({ status: "gate_error", gate: 0 });
	expect(result.autonomous.gates[0]).toMatchObject({ command: "./check.sh", status: "failed", cannotRun: true });
});

it("the built prime-agent through its daemon: a gate leaving `sleep 200 &` ends the run in seconds (exit 5), a gate not found ends it at once (exit 2)", {
	timeout: 180_000,
}, async () => {
	const world = await makeDaemonWorld(Array.from({ length: 5 }, () => ({ text: "Done." })));
	const pgidFile = join(world.home, "gate.pgid");
	onTestFinished(async () => {
		killRecordedGroup(pgidFile);
		await world.teardown();
	});
	const gate = `echo $$ > ${pgidFile}; sleep 200 & exit 1`;
	const begun = Date.now();
	const hung = await world.cli([
		"--autonomous",
		"-p",
		"go",
		"--model",
		"local/coder",
		"--max-minutes",
		"0.3",
		"--gate",
		gate,
	]);
	expect(Date.now() - begun).toBeLessThan(90_000);
	expect(hung.code).toBe(ExitCode.limitReached);
	expect(hung.stderr).toContain("Autonomous run stopped: the continuation limit was reached (3 of 3).");
	expect(world.server.requests).toHaveLength(4);
	const pgid = Number(readFileSync(pgidFile, "utf8"));
	await waitUntil(() => !groupAlive(pgid), 5_000);
	expect(groupAlive(pgid)).toBe(false);

	const missing = await world.cli([
		"--autonomous",
		"-p",
		"go",
		"--model",
		"local/coder",
		"--gate",
		"nonexistent-cmd-xyz",
	]);
	expect(missing.code).toBe(ExitCode.usage);
	expect(world.server.requests).toHaveLength(5);
	const said = shellSays("nonexistent-cmd-xyz", world.project);
	expect(missing.stderr).toContain(
		`Autonomous run stopped: gate 1 of 1 cannot run, a configuration error the model cannot fix: \`nonexistent-cmd-xyz\` exited with status 127 (not found): ${JSON.stringify(said)} (0 continuations, 1 turn, `,
	);
	expect(missing.stderr).toContain(
		"\n  failed    nonexistent-cmd-xyz (cannot run, exit 127)\nFix the gate's command in --gate on the command line (",
	);
});

/** Kill the process group whose id the gate wrote to `pgidFile`, if it did (gone already is fine). */
function killRecordedGroup(pgidFile: string): void {
	if (!existsSync(pgidFile)) return;
	try {
		process.kill(-Number(readFileSync(pgidFile, "utf8")), "SIGKILL");
	} catch {
		// Gone, as it should be.
	}
}
