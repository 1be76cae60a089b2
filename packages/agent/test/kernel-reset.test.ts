import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { kernelPythonForTests } from "prime-agent-test-support/kernel-python";
import { makeTempWorld, type TempWorld } from "prime-agent-test-support/temp-home";
import { afterEach, expect, it } from "vitest";
import { type KernelStatus, SessionKernel } from "../src/tools/index.js";

let world: TempWorld;
let kernel: SessionKernel;
afterEach(async () => {
	await kernel?.dispose();
	world?.cleanup();
});

function startKernel(statuses: KernelStatus[]): SessionKernel {
	world = makeTempWorld();
	return new SessionKernel({
		cwd: world.project,
		outputDir: join(world.home, "outputs"),
		python: kernelPythonForTests(),
		onStatus: (status) => statuses.push(status),
	});
}

it("starts on first use and reports its progress", async () => {
	const statuses: KernelStatus[] = [];
	kernel = startKernel(statuses);
	expect(kernel.started).toBe(false);
	await kernel.run("1 + 1");
	expect(statuses.map((status) => status.phase)).toEqual(["starting", "ready"]);
	await kernel.run("2 + 2");
	expect(statuses).toHaveLength(2);
});

it("a cell that ignores interrupts gets its kernel restarted, and the next cell says the variables are gone", async () => {
	const statuses: KernelStatus[] = [];
	kernel = startKernel(statuses);
	await kernel.run("kept = 1");
	const controller = new AbortController();
	// Interrupts are ignored before anything is printed, so the first chunk can safely trigger one.
	const stubborn =
		"import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('go', flush=True)\nwhile True:\n    try:\n        time.sleep(0.1)\n    except KeyboardInterrupt:\n        pass";
	const run = await kernel.run(stubborn, controller.signal, () => controller.abort());
	expect(run.cell.status).toBe("aborted");
	expect(run.cell.stillBusyAfterInterrupt).toBe(true);
	// Its own result must not say the kernel kept its state.
	expect(run.kernelRestarted).toBe(true);
	expect(statuses.map((status) => status.phase)).toContain("restarting");

	const next = await kernel.run("print('kept' in globals())");
	expect(next.cell.stdout).toBe("False\n");
	expect(next.resetNotice).toContain("Kernel restarted");
	const after = await kernel.run("1");
	expect(after.resetNotice).toBeUndefined();
}, 180_000);

it("a kernel that died is restarted on the next cell, which carries the notice once", async () => {
	kernel = startKernel([]);
	await kernel.run("kept = 1");
	const died = await kernel.run("import os\nos._exit(1)");
	expect(died.cell.status).toBe("died");
	// What the model reads says what happens next, and names no call it could not make.
	expect(died.cell.error?.evalue).toBe(
		"The kernel process exited with code 1 while this cell was running; all kernel variables are gone.",
	);
	const next = await kernel.run("print('kept' in globals())");
	expect(next.cell.stdout).toBe("False\n");
	expect(next.resetNotice).toContain("Kernel restarted");
});

it("when the user chooses to wait, the kernel and its variables stay and the next cell runs after the stubborn one", async () => {
	kernel = startKernel([]);
	kernel.onStillBusy = async () => "wait";
	await kernel.run("kept = 1");
	const controller = new AbortController();
	// It runs until the test releases it (not for a fixed time): still running when the user is asked.
	const release = join(world.project, "release");
	const stubborn = `import os, signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('go', flush=True)\nwhile not os.path.exists(${JSON.stringify(release)}):\n    time.sleep(0.05)\nfinished = True`;
	const run = await kernel.run(stubborn, controller.signal, () => controller.abort());
	expect(run.stillRunning).toBe(true);
	writeFileSync(release, "");
	const next = await kernel.run("print(kept, finished)");
	expect(next.resetNotice).toBeUndefined();
	expect(next.cell.stdout).toBe("1 True\n");
}, 180_000);

it("a cell left running after the interrupt keeps the kernel busy, and says so, until it ends", async () => {
	const statuses: KernelStatus[] = [];
	kernel = startKernel(statuses);
	kernel.onStillBusy = async () => "wait";
	const release = join(world.project, "release");
	const controller = new AbortController();
	const stubborn = `import os, signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('go', flush=True)\nwhile not os.path.exists(${JSON.stringify(release)}):\n    time.sleep(0.05)`;
	const run = await kernel.run(stubborn, controller.signal, () => controller.abort());
	expect(run.stillRunning).toBe(true);
	expect(kernel.busy).toBe(true);
	expect(statuses.at(-1)).toEqual({ phase: "busy", reason: "the interrupted cell is still running" });
	writeFileSync(release, "");
	const deadline = Date.now() + 30_000;
	while (statuses.at(-1)?.phase !== "idle" && Date.now() < deadline)
		await new Promise((resolve) => setTimeout(resolve, 50));
	expect(statuses.map((status) => status.phase)).toEqual(["starting", "ready", "busy", "idle"]);
	expect(kernel.busy).toBe(false);
}, 180_000);
