import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
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

	it("moves a 20 MB variable in chunks both ways (the server refuses one message of that size from the host)", async () => {
		const dir = join(workDir, "large");
		const first = await remoteKernel();
		await first.execute(
			"import hashlib, os\nblob = os.urandom(20 * 1024 * 1024)\ndigest = hashlib.sha256(blob).hexdigest()",
		);
		const digest = await value(first, "digest");
		const report = await saveKernelState(first, dir, { maxVariableBytes: 32 * 1024 * 1024 });
		expect(report.unsaveable).toEqual([]);
		const blob = report.variables.find((v) => v.name === "blob");
		expect(blob?.bytes).toBeGreaterThan(20 * 1024 * 1024);
		expect((await stat(join(dir, "vars", blob?.file ?? ""))).size).toBe(blob?.bytes);
		const second = await remoteKernel();
		const restored = await restoreKernelState(second, dir);
		expect(restored.failed).toEqual([]);
		expect(await value(second, "hashlib.sha256(blob).hexdigest() == digest")).toBe("True");
		expect(await value(second, "digest")).toBe(digest);
	});

	it("names the host's files in what a restore could not load: a damaged file, a missing one, a corrupt manifest", async () => {
		const dir = join(workDir, "damaged");
		const first = await remoteKernel();
		await first.execute("keep = {'k': 1}\nbroken = [1, 2, 3]\ngone = 'x'");
		const report = await saveKernelState(first, dir);
		const file = (name: string) => report.variables.find((v) => v.name === name)?.file ?? "";
		await writeFile(join(dir, "vars", file("broken")), "garbage");
		await rm(join(dir, "vars", file("gone")));
		const second = await remoteKernel();
		const restored = await restoreKernelState(second, dir);
		expect(restored.restored).toEqual(["keep"]);
		const reasons = Object.fromEntries(restored.failed.map((failure) => [failure.name, failure.reason]));
		expect(Object.keys(reasons).sort()).toEqual(["broken", "gone"]);
		expect(reasons.broken).toBe("ValueError: the file does not match its checksum (damaged snapshot)");
		expect(reasons.gone).toContain(join(dir, "vars", file("gone")));
		expect(reasons.gone).not.toContain(await mirrorOf(second));

		await writeFile(join(dir, "manifest.json"), "{ not json");
		const third = await remoteKernel();
		const corrupt = await restoreKernelState(third, dir);
		expect(corrupt.corrupt?.startsWith(`${join(dir, "manifest.json")}: JSONDecodeError`)).toBe(true);
		expect(corrupt.restored).toEqual([]);
		expect(await restoreKernelState(third, join(workDir, "nothing-here"))).toEqual({
			restored: [],
			imports: [],
			failed: [],
			unsaveable: [],
			missing: true,
		});
		expect((await restoreKernelState(third, dir, "../manifest")).corrupt).toBe("not a session entry id: '../manifest'");
	});

	it("refuses a kernel's request for any file but the snapshot's own, and any request once the transfer ended", async () => {
		const dir = join(workDir, "hostile");
		const kernel = await remoteKernel();
		// The kernel is not trusted: this one asks for other paths in the middle of a real save.
		await kernel.execute(
			[
				"import prime_kernel.state_transfer as st",
				"real_request, probes, transfers = st._request, [], []",
				"async def probing(transfer, op, **fields):",
				"    transfers.append(transfer)",
				"    if op == 'want':",
				"        for name in ['../escape.pkl', 'vars/../../escape.pkl', '/tmp/escape.pkl', 'entries/e1.json', 'vars/' + 'a' * 64 + '.pkl/x']:",
				"            reply = await st.host_request(transfer, {'op': 'put', 'name': name, 'offset': 0, 'data': 'aGk=', 'final': True})",
				"            probes.append(reply.get('error'))",
				"        reply = await st.host_request(transfer, {'op': 'read', 'name': '../../etc/passwd', 'offset': 0})",
				"        probes.append(reply.get('error'))",
				"    return await real_request(transfer, op, **fields)",
				"st._request = probing",
				"x = 1",
			].join("\n"),
		);
		const report = await saveKernelState(kernel, dir);
		expect(report.variables.map((v) => v.name)).toContain("x");
		const printed = await kernel.execute("print(__import__('json').dumps(probes))");
		const probes = JSON.parse(printed.stdout) as string[];
		const refusal = (name: string) =>
			`${JSON.stringify(name)} is not a file of a state snapshot (manifest.json, entries/<id>.json or vars/<sha256>.pkl)`;
		expect(probes).toEqual([
			refusal("../escape.pkl"),
			refusal("vars/../../escape.pkl"),
			refusal("/tmp/escape.pkl"),
			"entries/e1.json is written by the host at the commit, not sent",
			refusal(`vars/${"a".repeat(64)}.pkl/x`),
			'a state save takes want, put and commit requests, not "read"',
		]);
		expect(existsSync(join(workDir, "escape.pkl"))).toBe(false);
		expect(existsSync("/tmp/escape.pkl")).toBe(false);
		expect(existsSync(join(dir, "entries"))).toBe(false);
		const late = await kernel.execute("await st.host_request(transfers[0], {'op': 'want', 'files': []})");
		expect(late.result).toMatch(/no host handler for request type "prime\.state\.[0-9a-f]{16}"/);
		await kernel.execute("st._request = real_request");
	});

	it("keeps the host's previous snapshot whole when the kernel dies mid-transfer", async () => {
		const dir = join(workDir, "killed");
		const kernel = await remoteKernel();
		await kernel.execute("import os\nkeep = 1");
		const first = await saveKernelState(kernel, dir, { entry: "e1" });
		const manifest = await readFile(join(dir, "manifest.json"));
		await kernel.execute(
			[
				"import signal, prime_kernel.state_transfer as st",
				"real_request = st._request",
				"async def dying(transfer, op, **fields):",
				"    if op == 'put' and fields.get('offset', 0) > 0:",
				"        os.kill(os.getpid(), signal.SIGKILL)",
				"    return await real_request(transfer, op, **fields)",
				"st._request = dying",
				"keep = 2",
				"big = os.urandom(10 * 1024 * 1024)",
			].join("\n"),
		);
		const failed = await saveKernelState(kernel, dir, { entry: "e2" }).catch((error: Error) => error);
		expect(failed).toBeInstanceOf(StateSnapshotError);
		expect((failed as Error).message).toMatch(/^The kernel state save failed: /);
		expect(await readFile(join(dir, "manifest.json"))).toEqual(manifest);
		expect(existsSync(join(dir, "entries", "e2.json"))).toBe(false);
		const vars = await readdir(join(dir, "vars"));
		expect(vars.filter((name) => !name.endsWith(".pkl"))).toEqual([]);
		for (const name of vars) expect((await stat(join(dir, "vars", name))).size).toBeLessThan(1024 * 1024);
		const fresh = await remoteKernel();
		const restored = await restoreKernelState(fresh, dir);
		expect(restored.restored).toEqual(first.variables.map((v) => v.name));
		expect(await value(fresh, "keep")).toBe("1");
	});

	it("prunes the host's history past its bound, seals of dropped entries included", async () => {
		const dir = join(workDir, "bounded");
		const kernel = await remoteKernel();
		const saves = [];
		for (const n of [1, 2, 3, 4]) {
			await kernel.execute(`blob = bytes([${n}]) * 100_000`);
			saves.push(await saveKernelState(kernel, dir, { entry: `e${n}`, maxHistoryBytes: 350_000 }));
			await writeFile(join(dir, "entries", `e${n}.seal`), "seal");
		}
		// The fourth save passed 350 kB; the history went back under half of it: only e4 is left.
		expect(saves.map((save) => save.prunedEntries.sort())).toEqual([[], [], [], ["e1", "e2", "e3"]]);
		expect((await readdir(join(dir, "entries"))).sort()).toEqual(["e4.json", "e4.seal"]);
		expect(await readdir(join(dir, "vars"))).toEqual([saves[3]?.variables[0]?.file]);
		expect(readStateManifest(dir, "e1")).toBeUndefined();
	});

	it("moves 3,000 small variables several to a request", async () => {
		const dir = join(workDir, "many");
		const kernel = await remoteKernel();
		await kernel.execute("for i in range(3000):\n    globals()[f'variable_with_a_rather_long_name_{i}'] = i\ndel i");
		const report = await saveKernelState(kernel, dir);
		expect(report.variables).toHaveLength(3000);
		expect(report.written).toBe(3000);
		expect(await readdir(join(dir, "vars"))).toHaveLength(3000);
		const second = await remoteKernel();
		const restored = await restoreKernelState(second, dir);
		expect(restored.restored).toHaveLength(3000);
		expect(await value(second, "variable_with_a_rather_long_name_2999")).toBe("2999");
	}, 120_000);
});
