import { readdir, readFile, rm, mkdtemp, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Kernel, readStateManifest, restoreKernelState, StateSnapshotError, saveKernelState } from "../src/index.js";
import { startJupyterServer, type TestJupyterServer } from "./jupyter-server.js";

let server: TestJupyterServer;
let workDir: string;
const kernels: Kernel[] = [];

beforeAll(async () => {
	workDir = await mkdtemp(join(tmpdir(), "remote-state-test-"));
	server = await startJupyterServer();
}, 240_000);

afterAll(async () => {
	await Promise.all(kernels.map((kernel) => kernel.shutdown().catch(() => {})));
	await server?.stop();
	await rm(workDir, { recursive: true, force: true });
}, 60_000);

async function remoteKernel(): Promise<Kernel> {
	const kernel = await Kernel.start({ jupyterServer: server.options() });
	kernels.push(kernel);
	return kernel;
}

async function localKernel(): Promise<Kernel> {
	const kernel = await Kernel.start({ cwd: workDir });
	kernels.push(kernel);
	return kernel;
}

async function value(kernel: Kernel, expression: string): Promise<string | undefined> {
	const cell = await kernel.execute(expression);
	expect(cell.error?.evalue ?? "").toBe("");
	return cell.result;
}

/** Where the remote kernel keeps its mirror (to show the host's folder is not the kernel's). */
async function mirrorOf(kernel: Kernel): Promise<string> {
	return String(await value(kernel, "__import__('prime_kernel.state_transfer', fromlist=['x']).mirror_dir()")).slice(
		1,
		-1,
	);
}

describe("state snapshots of a kernel on a Jupyter Server", () => {
	it("saves into the host's folder over the channel and restores into a fresh remote kernel and a local one", async () => {
		const dir = join(workDir, "round-trip");
		const first = await remoteKernel();
		await first.execute(
			[
				"import socket, json as js",
				"config = {'retries': 3}",
				"class Point:",
				"    def __init__(self, x, y): self.x, self.y = x, y",
				"origin = Point(3, 4)",
				"conn = socket.socket()",
			].join("\n"),
		);
		const report = await saveKernelState(first, dir, { entry: "e1" });
		expect(report.variables.map((v) => v.name).sort()).toEqual(["Point", "config", "origin"]);
		expect(report.written).toBe(3);
		expect(report.imports).toEqual({ socket: "socket", js: "json" });
		expect(report.unsaveable.map((u) => u.name)).toEqual(["conn"]);
		expect(report.unsaveable[0]?.reason).toMatch(/socket/);
		expect(readStateManifest(dir)?.entry).toBe("e1");
		expect(readStateManifest(dir, "e1")?.variables).toHaveLength(3);
		expect((await readdir(join(dir, "vars"))).sort()).toEqual(report.variables.map((v) => v.file).sort());
		expect((await stat(join(dir, "manifest.json"))).mode & 0o777).toBe(0o600);
		expect((await stat(join(dir, "vars"))).mode & 0o777).toBe(0o700);
		expect(dir.startsWith(await mirrorOf(first))).toBe(false);

		// An unchanged value does not travel again (a class pickled by value is new each save, as locally).
		await first.execute("config['retries'] = 4");
		const second = await saveKernelState(first, dir, { entry: "e2" });
		const before = new Set(report.variables.map((v) => v.file));
		const fresh = second.variables.filter((v) => !before.has(v.file)).map((v) => v.name);
		expect(fresh.sort()).toEqual(["Point", "config"]);
		expect(second.written).toBe(2);

		const remote = await remoteKernel();
		const restored = await restoreKernelState(remote, dir, "e1");
		expect(restored.failed).toEqual([]);
		expect(restored.restored.sort()).toEqual(["Point", "config", "origin"]);
		expect(await value(remote, "(config['retries'], origin.x, isinstance(origin, Point), js.dumps(1))")).toBe(
			"(3, 3, True, '1')",
		);
		const local = await localKernel();
		await restoreKernelState(local, dir);
		expect(await value(local, "config['retries']")).toBe("4");
	});

	it("restores a local kernel's snapshot into a remote kernel", async () => {
		const dir = join(workDir, "local-to-remote");
		const local = await localKernel();
		await local.execute("numbers = list(range(10))\ndef twice(k): return 2 * k");
		await saveKernelState(local, dir);
		const remote = await remoteKernel();
		const restored = await restoreKernelState(remote, dir);
		expect(restored.restored.sort()).toEqual(["numbers", "twice"]);
		expect(await value(remote, "twice(numbers[-1])")).toBe("18");
	});
});
