import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Kernel, KernelSetupError, resolveKernelPython, setupKernelEnvironment } from "../src/index.js";

let emptyDir: string;

beforeAll(async () => {
	emptyDir = await mkdtemp(join(tmpdir(), "kernel-setup-test-"));
});

afterAll(async () => {
	await rm(emptyDir, { recursive: true, force: true });
});

describe("finding the kernel interpreter", () => {
	it("says how to run setup when the venv does not exist", () => {
		const resolve = () => resolveKernelPython({ PRIME_AGENT_DIR: emptyDir });
		expect(resolve).toThrow(KernelSetupError);
		expect(resolve).toThrow(/npm run setup/);
		expect(resolve).toThrow(/prime-agent setup/);
	});

	it("names a PRIME_AGENT_KERNEL_PYTHON that does not exist", () => {
		const missing = join(emptyDir, "no-python");
		expect(() => resolveKernelPython({ PRIME_AGENT_KERNEL_PYTHON: missing })).toThrow(missing);
	});

	it("prefers PRIME_AGENT_KERNEL_PYTHON over the setup venv", () => {
		expect(resolveKernelPython({ PRIME_AGENT_KERNEL_PYTHON: process.execPath })).toBe(process.execPath);
	});

	it("refuses to start with a missing interpreter, with the setup error", async () => {
		await expect(Kernel.start({ python: join(emptyDir, "python") })).rejects.toThrow(KernelSetupError);
	});
});

describe("setting up the kernel environment", () => {
	it("reuses a venv that already has the pinned versions, quickly", async () => {
		// The setup venv of this machine's agent home (never derived from PRIME_AGENT_KERNEL_PYTHON,
		// which may be any interpreter), made by `npm run setup`.
		const python = resolveKernelPython({ ...process.env, PRIME_AGENT_KERNEL_PYTHON: "" });
		const lines: string[] = [];
		const startedAt = Date.now();
		const outcome = await setupKernelEnvironment({ log: (line) => lines.push(line) });
		expect(outcome).toEqual({ python, created: false });
		expect(Date.now() - startedAt).toBeLessThan(10_000);
		expect(lines.join("\n")).toContain("ipykernel==7.4.0");
	});

	it("run inside a repository, runs none of its modules", async () => {
		// `npm run setup` as a real process in a repository holding the modules its Python imports,
		// each leaving a marker; the agent home's venv is this machine's (nothing to install).
		const python = resolveKernelPython({ ...process.env, PRIME_AGENT_KERNEL_PYTHON: "" });
		const repo = join(emptyDir, "repository");
		const markers = join(emptyDir, "setup-markers");
		const home = join(emptyDir, "setup-home");
		await Promise.all([mkdir(repo), mkdir(markers), mkdir(home)]);
		await symlink(dirname(dirname(python)), join(home, "kernel-venv"));
		for (const name of ["json", "importlib", "pip", "venv"]) {
			await writeFile(join(repo, `${name}.py`), `open(${JSON.stringify(join(markers, name))}, "w").close()\n`);
		}
		const setupCli = fileURLToPath(new URL("../dist/setup-cli.js", import.meta.url));
		const output = await new Promise<string>((resolve, reject) =>
			execFile(
				process.execPath,
				[setupCli],
				{ cwd: repo, env: { ...process.env, PRIME_AGENT_DIR: home } },
				(error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
			),
		);
		expect(output).toContain("Kernel environment is ready");
		expect(await readdir(markers)).toEqual([]);
	});

	it("explains a failed pip install and says what to do", { timeout: 180_000 }, async () => {
		const attempt = setupKernelEnvironment({
			agentDir: join(emptyDir, "offline-agent"),
			// An index-less pip that ignores any configured mirror: nothing can be installed.
			env: { PRIME_AGENT_PIP_ARGS: "--isolated --no-index" },
		});
		await expect(attempt).rejects.toThrow(KernelSetupError);
		await expect(attempt).rejects.toThrow(/pip exited with code 1[\s\S]*ipykernel==7\.4\.0[\s\S]*run setup again/);
	});

	it("explains a missing python3 clearly", async () => {
		const attempt = setupKernelEnvironment({
			agentDir: join(emptyDir, "agent"),
			env: { PRIME_AGENT_SETUP_PYTHON: join(emptyDir, "no-python3") },
		});
		await expect(attempt).rejects.toThrow(KernelSetupError);
		await expect(attempt).rejects.toThrow(/Install Python/);
	});
});
