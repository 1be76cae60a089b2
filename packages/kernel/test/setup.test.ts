import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
