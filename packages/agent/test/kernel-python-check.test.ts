import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliText } from "prime-agent-test-support/cli-process";
import { type LoopbackServer, openAiCompletionsServer } from "prime-agent-test-support/loopback-servers";
import { makeTempWorld, type TempWorld } from "prime-agent-test-support/temp-home";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../src/cli/index.js";
import { ExitCode } from "../src/errors.js";
import { localLink } from "../src/link/index.js";
import { startSession } from "../src/startup/index.js";
import { memoryIo } from "./cli-io.js";

// A real interpreter without zmq, ipykernel or dill: a bare venv (no pip, so it takes a second).
let venvRoot: string;
let barePython: string;
beforeAll(() => {
	venvRoot = mkdtempSync(join(tmpdir(), "prime-agent-bare-venv-"));
	execFileSync("python3", ["-m", "venv", "--without-pip", join(venvRoot, "venv")]);
	barePython = join(venvRoot, "venv", "bin", "python");
}, 180_000);
afterAll(() => rmSync(venvRoot, { recursive: true, force: true }));

/**
 * An interpreter whose modules are there by name, but zmq's compiled part is missing (a broken
 * pyzmq install): it passes the start-up check, and its kernel cannot start. Made once.
 */
function brokenPyzmqPython(): string {
	const broken = join(venvRoot, "broken");
	const python = join(broken, "bin", "python");
	if (existsSync(python)) return python;
	execFileSync("python3", ["-m", "venv", "--without-pip", broken]);
	const site = execFileSync(python, ["-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
		.toString()
		.trim();
	writeFileSync(join(site, "zmq.py"), "raise ImportError(\"No module named 'zmq.backend.cython'\")\n");
	writeFileSync(join(site, "ipykernel.py"), "");
	writeFileSync(join(site, "dill.py"), "");
	return python;
}

let world: TempWorld | undefined;
let server: LoopbackServer | undefined;
afterEach(async () => {
	await server?.close();
	world?.cleanup();
	server = undefined;
	world = undefined;
});

/** A world whose model is a loopback server that would run a cell, then answer. */
async function worldWith(env: Record<string, string>): Promise<TempWorld> {
	server = await openAiCompletionsServer([{ code: "print(6 * 7)" }, { text: "It is 42." }]);
	world = makeTempWorld(env);
	world.writeHome("models.json", { providers: { local: { baseUrl: server.baseUrl, models: [{ id: "m" }] } } });
	return world;
}

describe("a kernel interpreter that cannot run the kernel", () => {
	it("PRIME_AGENT_KERNEL_PYTHON without zmq: -p fails with exit 4 before any model call, saying what is missing and what to do", async () => {
		const { project, env } = await worldWith({ PRIME_AGENT_KERNEL_PYTHON: barePython });
		const io = memoryIo(project, env);
		expect(await runCli(["-p", "what is 6 * 7?", "--model", "local/m"], io)).toBe(ExitCode.kernel);
		expect(io.err()).toBe(
			`Error: The Python kernel environment is not ready: PRIME_AGENT_KERNEL_PYTHON is set to ${barePython}, which lacks the Python modules the kernel needs: zmq, ipykernel, dill. ` +
				`Install them into it (\`${barePython} -m pip install ipykernel==7.4.0 dill==0.4.1\`), or unset PRIME_AGENT_KERNEL_PYTHON to use the kernel environment that \`npm run setup\` (or \`prime-agent setup\`) creates.\n` +
				"Once it is fixed, `prime-agent doctor` checks the kernel for real.\n",
		);
		expect(io.out()).toBe("");
		expect(server?.requests.length).toBe(0);
	});

	it("a repository's zmq.py, ipykernel.py and dill.py do not pass for the modules the interpreter lacks", async () => {
		const { project, env } = await worldWith({ PRIME_AGENT_KERNEL_PYTHON: barePython });
		for (const name of ["zmq", "ipykernel", "dill"]) writeFileSync(join(project, `${name}.py`), "");
		// A real process started in the repository: the check's Python runs there.
		const run = await runCliText(["-p", "what is 6 * 7?", "--model", "local/m"], project, env);
		expect(run.code).toBe(ExitCode.kernel);
		expect(run.stderr).toContain(
			`${barePython}, which lacks the Python modules the kernel needs: zmq, ipykernel, dill.`,
		);
		expect(server?.requests.length).toBe(0);
	});

	it("the setup venv without the modules: the run says to repair it with setup", async () => {
		const { project, env, home } = await worldWith({});
		execFileSync("python3", ["-m", "venv", "--without-pip", join(home, "kernel-venv")]);
		const io = memoryIo(project, env);
		expect(await runCli(["-p", "what is 6 * 7?", "--model", "local/m"], io)).toBe(ExitCode.kernel);
		expect(io.err()).toContain(
			`The kernel interpreter ${join(home, "kernel-venv", "bin", "python")} lacks the Python modules the kernel needs: zmq, ipykernel, dill. Repair its environment with \`npm run setup\``,
		);
		expect(server?.requests.length).toBe(0);
	}, 180_000);

	it("an interpreter that does not run Python says so with its output", async () => {
		const { project, env } = await worldWith({ PRIME_AGENT_KERNEL_PYTHON: "/bin/false" });
		const io = memoryIo(project, env);
		expect(await runCli(["-p", "hi", "--model", "local/m"], io)).toBe(ExitCode.kernel);
		expect(io.err()).toContain(
			"PRIME_AGENT_KERNEL_PYTHON is set to /bin/false, which fails to run a Python script (exit code 1). Fix or unset the variable.",
		);
		expect(server?.requests.length).toBe(0);
	});

	it("an environment that passes the check but whose kernel cannot start: the run stops after that cell with exit 4, the model is not asked again", async () => {
		const python = brokenPyzmqPython();
		const { project, env } = await worldWith({ PRIME_AGENT_KERNEL_PYTHON: python });
		const io = memoryIo(project, env);
		expect(await runCli(["-p", "what is 6 * 7?", "--model", "local/m"], io)).toBe(ExitCode.kernel);
		expect(io.err()).toContain(
			`The Python kernel could not start, so the run stopped: Cannot start the kernel with ${python}: The kernel process exited with code 1 during startup.`,
		);
		expect(io.err()).toContain("ImportError: No module named 'zmq.backend.cython'");
		expect(io.err()).toMatch(/The session is saved: resume it with `prime-agent --resume [0-9a-f-]+`\.\n$/);
		expect(io.out()).not.toContain("It is 42.");
		expect(server?.requests.length).toBe(1);
	}, 180_000);

	it("in a view (the terminal UI's link), that run ends with the kernel's error, not silently", async () => {
		const python = brokenPyzmqPython();
		const { project, env } = await worldWith({ PRIME_AGENT_KERNEL_PYTHON: python });
		const started = await startSession({ cwd: project, env, model: "local/m" });
		try {
			const end = await localLink(started).prompt("what is 6 * 7?");
			expect(end.status).toBe("error");
			expect(end.errorMessage).toContain(`Cannot start the kernel with ${python}`);
			expect(server?.requests.length).toBe(1);
		} finally {
			await started.dispose();
		}
	}, 180_000);

	it("doctor fails the Kernel Python check with the same fix", async () => {
		const { project, env } = await worldWith({ PRIME_AGENT_KERNEL_PYTHON: barePython });
		const io = memoryIo(project, env);
		expect(await runCli(["doctor"], io)).toBe(ExitCode.usage);
		expect(io.out()).toContain(
			`✗ Kernel Python: PRIME_AGENT_KERNEL_PYTHON is set to ${barePython}, which lacks the Python modules the kernel needs: zmq, ipykernel, dill.\n` +
				`    fix: Install them into it (\`${barePython} -m pip install ipykernel==7.4.0 dill==0.4.1\`), or unset PRIME_AGENT_KERNEL_PYTHON`,
		);
		expect(io.out()).toContain("1 problem to fix.");
	});
});
