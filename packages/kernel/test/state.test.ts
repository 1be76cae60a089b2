import { mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Kernel, readStateManifest, restoreKernelState, StateSnapshotError, saveKernelState } from "../src/index.js";

let workDir: string;
const kernels: Kernel[] = [];

async function freshKernel(): Promise<Kernel> {
	const kernel = await Kernel.start({ cwd: workDir });
	kernels.push(kernel);
	return kernel;
}

async function value(kernel: Kernel, expression: string): Promise<string | undefined> {
	const cell = await kernel.execute(expression);
	expect(cell.error?.evalue ?? "").toBe("");
	return cell.result;
}

beforeAll(async () => {
	workDir = await mkdtemp(join(tmpdir(), "kernel-state-test-"));
});

afterAll(async () => {
	await Promise.all(kernels.map((kernel) => kernel.shutdown()));
	await rm(workDir, { recursive: true, force: true });
});

describe("kernel state snapshots", () => {
	it("restores data, cell-defined functions and class instances in a new kernel, and names what it could not save", async () => {
		const dir = join(workDir, "round-trip");
		const first = await freshKernel();
		await first.execute(
			[
				"import socket, json as js",
				"config = {'retries': 3, 'names': ['a', 'b']}",
				"class Point:",
				"    def __init__(self, x, y): self.x, self.y = x, y",
				"    def norm2(self): return self.x ** 2 + self.y ** 2",
				"origin = Point(3, 4)",
				"def scaled(k): return config['retries'] * k",
				"conn = socket.socket()",
				"skip_me = 'not saved'",
				"41 + 1",
			].join("\n"),
		);
		const report = await saveKernelState(first, dir, { exclude: ["skip_me"] });
		expect(report.variables.map((v) => v.name).sort()).toEqual(["Point", "config", "origin", "scaled"]);
		expect(report.imports).toEqual({ socket: "socket", js: "json" });
		expect(report.unsaveable).toHaveLength(1);
		expect(report.unsaveable[0]).toMatchObject({ name: "conn", type: "socket" });
		expect(report.unsaveable[0].reason).toMatch(/socket/);
		// The save cell left no trace in the history.
		expect(await value(first, "_")).toBe("42");

		const second = await freshKernel();
		const restored = await restoreKernelState(second, dir);
		expect(restored.failed).toEqual([]);
		expect(restored.restored.sort()).toEqual(["Point", "config", "origin", "scaled"]);
		expect(restored.unsaveable.map((u) => u.name)).toEqual(["conn"]);
		expect(await value(second, "config['names'], origin.norm2(), isinstance(origin, Point), js.dumps([1])")).toBe(
			"(['a', 'b'], 25, True, '[1]')",
		);
		// A restored function sees the live namespace, as it did before.
		expect(await value(second, "config['retries'] = 10; scaled(2)")).toBe("20");
		expect(await value(second, "'conn' in dir(), 'skip_me' in dir()")).toBe("(False, False)");
	});

	it("saves lambdas inside data, and instances of a class defined again since (they join the current class)", async () => {
		const dir = join(workDir, "by-value");
		const first = await freshKernel();
		await first.execute(
			[
				"class Box:",
				"    def size(self): return 1",
				"old_box = Box()",
				"class Box:",
				"    def size(self): return 2",
				"new_box = Box()",
				"steps = [lambda v: v + 1, lambda v: v * 10]",
			].join("\n"),
		);
		const report = await saveKernelState(first, dir);
		expect(report.unsaveable).toEqual([]);
		const second = await freshKernel();
		const restored = await restoreKernelState(second, dir);
		expect(restored.failed).toEqual([]);
		expect(await value(second, "old_box.size(), new_box.size(), isinstance(new_box, Box), steps[1](steps[0](1))")).toBe(
			"(2, 2, True, 20)",
		);
	});

	it("keeps the snapshot private, rewrites only changed variables and drops files no longer named", async () => {
		const dir = join(workDir, "incremental");
		const kernel = await freshKernel();
		await kernel.execute("a = list(range(1000))\nb = 'text'");
		const first = await saveKernelState(kernel, dir);
		expect(first.written).toBe(2);
		expect((await stat(dir)).mode & 0o777).toBe(0o700);
		expect((await stat(join(dir, "manifest.json"))).mode & 0o777).toBe(0o600);
		for (const file of await readdir(join(dir, "vars"))) {
			expect((await stat(join(dir, "vars", file))).mode & 0o777).toBe(0o600);
		}
		await kernel.execute("b = 'changed'");
		const second = await saveKernelState(kernel, dir);
		expect(second.written).toBe(1);
		expect((await readdir(join(dir, "vars"))).sort()).toEqual(second.variables.map((v) => v.file).sort());
		expect(readStateManifest(dir)?.variables.map((v) => v.name)).toEqual(["a", "b"]);
	});

	it("refuses a variable past the per-variable cap and values past the total cap, saving the rest", async () => {
		const dir = join(workDir, "caps");
		const kernel = await freshKernel();
		await kernel.execute("small = b'x' * 100\nbig = b'y' * 5000\nmid1 = b'z' * 600\nmid2 = b'w' * 600");
		const report = await saveKernelState(kernel, dir, { maxVariableBytes: 1000, maxTotalBytes: 1000 });
		expect(report.variables.map((v) => v.name)).toEqual(["small", "mid1"]);
		const reasons = Object.fromEntries(report.unsaveable.map((u) => [u.name, u.reason]));
		expect(reasons.big).toMatch(/cap per variable/);
		expect(reasons.mid2).toMatch(/cap for the whole snapshot/);
	});

	it("reports a corrupt manifest and a damaged variable file without failing the restore", async () => {
		const dir = join(workDir, "corrupt");
		const kernel = await freshKernel();
		await kernel.execute("keep = {'k': 1}\nbroken = [1, 2, 3]");
		const report = await saveKernelState(kernel, dir);
		const brokenFile = report.variables.find((v) => v.name === "broken")?.file ?? "";
		await writeFile(join(dir, "vars", brokenFile), "garbage");

		const second = await freshKernel();
		const restored = await restoreKernelState(second, dir);
		expect(restored.restored).toEqual(["keep"]);
		expect(restored.failed).toHaveLength(1);
		expect(restored.failed[0].name).toBe("broken");
		expect(restored.failed[0].reason).toMatch(/checksum/);

		await writeFile(join(dir, "manifest.json"), "{ not json");
		const third = await freshKernel();
		const empty = await restoreKernelState(third, dir);
		expect(empty.corrupt).toMatch(/manifest\.json/);
		expect(empty.restored).toEqual([]);
		expect(await value(third, "'keep' in dir()")).toBe("False");
		expect(() => readStateManifest(dir)).toThrow(StateSnapshotError);
	});

	it("handles a namespace whose report is far longer than a cell's visible output", async () => {
		const dir = join(workDir, "many");
		const kernel = await freshKernel();
		await kernel.execute("for i in range(3000):\n    globals()[f'variable_with_a_rather_long_name_{i}'] = i\ndel i");
		const report = await saveKernelState(kernel, dir);
		expect(report.variables).toHaveLength(3000);
		const second = await freshKernel();
		const restored = await restoreKernelState(second, dir);
		expect(restored.restored).toHaveLength(3000);
		expect(await value(second, "variable_with_a_rather_long_name_2999")).toBe("2999");
	});

	it("keeps a manifest per entry that share the unchanged variables, and restores any of them exactly", async () => {
		const dir = join(workDir, "entries");
		const kernel = await freshKernel();
		await kernel.execute("big = list(range(20000))\nstep = 1");
		const first = await saveKernelState(kernel, dir, { entry: "e1" });
		expect(first.written).toBe(2);
		await kernel.execute("step = 2");
		const second = await saveKernelState(kernel, dir, { entry: "e2" });
		// Only the changed variable is written again; both manifests name the same file for `big`.
		expect(second.written).toBe(1);
		expect((await readdir(join(dir, "vars"))).length).toBe(3);
		expect(readStateManifest(dir, "e1")?.entry).toBe("e1");
		expect(readStateManifest(dir)?.entry).toBe("e2");

		const earlier = await freshKernel();
		expect((await restoreKernelState(earlier, dir, "e1")).restored.sort()).toEqual(["big", "step"]);
		expect(await value(earlier, "(step, len(big), big[-1])")).toBe("(1, 20000, 19999)");
		const later = await freshKernel();
		await restoreKernelState(later, dir, "e2");
		expect(await value(later, "step")).toBe("2");
		// An id that could name another file is refused on both sides.
		expect((await restoreKernelState(later, dir, "../manifest")).corrupt).toBe("not a session entry id: '../manifest'");
		await expect(saveKernelState(kernel, dir, { entry: "../x" })).rejects.toThrow('"../x" is not a session entry id.');
	});

	it("past its bound the history drops its oldest entries and the files only they named", async () => {
		const dir = join(workDir, "bounded");
		const kernel = await freshKernel();
		const saves = [];
		for (const n of [1, 2, 3, 4]) {
			await kernel.execute(`blob = bytes([${n}]) * 100_000`);
			saves.push(await saveKernelState(kernel, dir, { entry: `e${n}`, maxHistoryBytes: 350_000 }));
		}
		// The fourth save passed 350 kB; the history went back under half of it: only e4 is left.
		expect(saves.map((save) => save.prunedEntries.sort())).toEqual([[], [], [], ["e1", "e2", "e3"]]);
		expect((await readdir(join(dir, "entries"))).sort()).toEqual(["e4.json"]);
		expect(await readdir(join(dir, "vars"))).toEqual([saves[3]?.variables[0]?.file]);
		expect(readStateManifest(dir, "e1")).toBeUndefined();
	});

	it("reports a missing snapshot as missing", async () => {
		const kernel = await freshKernel();
		const restored = await restoreKernelState(kernel, join(workDir, "nothing-here"));
		expect(restored).toMatchObject({ missing: true, restored: [], failed: [] });
		expect(readStateManifest(join(workDir, "nothing-here"))).toBeUndefined();
	});
});
