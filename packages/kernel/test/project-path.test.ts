import { mkdir, readdir, writeFile } from "node:fs/promises";
import { delimiter, join } from "node:path";
import { expect, it } from "vitest";
import { saveKernelState } from "../src/index.js";
import { scratchDir, startKernel } from "./kernels.js";

const scratch = scratchDir("kernel-project-path-");

/**
 * Modules a project could hold to take over the kernel, each leaving a marker when it runs: one the
 * kernel imports as it starts (zmq), a standard module (json), what it imports later on its own
 * (dill on a save, astroid on the first traceback, orjson if ever), and our own package.
 */
const SHADOWS = ["zmq", "json", "dill", "astroid", "orjson", "prime_kernel"];

it("a kernel started in a project imports nothing from it on its own account; cells import the project's modules, after %cd too", async () => {
	const project = join(scratch(), "project");
	const markers = join(scratch(), "markers");
	await Promise.all([mkdir(join(project, "sub"), { recursive: true }), mkdir(markers)]);
	for (const name of SHADOWS) {
		await writeFile(join(project, `${name}.py`), `open(${JSON.stringify(join(markers, name))}, "w").close()\n`);
	}
	await writeFile(join(project, "mymodule.py"), "VALUE = 'mine'\n");
	await writeFile(join(project, "sub", "other.py"), "VALUE = 'other'\n");

	// A PYTHONPATH with an empty entry (`export PYTHONPATH=$PYTHONPATH:/x`) would mean the project, first.
	const kernel = await startKernel({ cwd: project, env: { PYTHONPATH: `${delimiter}${join(scratch(), "none")}` } });
	const run = async (code: string) => {
		const cell = await kernel.execute(code);
		return { stdout: cell.stdout, error: cell.error && `${cell.error.ename}: ${cell.error.evalue}` };
	};
	expect(await run("import mymodule\nprint(mymodule.VALUE)")).toEqual({ stdout: "mine\n", error: undefined });
	// The project folder is there once, as '' (it follows %cd), last: after everything installed.
	expect(await run("import sys\nprint(sys.path.count(''), sys.path[-1] == '')")).toEqual({
		stdout: "1 True\n",
		error: undefined,
	});
	expect((await run("1 / 0")).error).toBe("ZeroDivisionError: division by zero");
	expect(await run("import json\nprint(json.dumps([1]))")).toEqual({ stdout: "[1]\n", error: undefined });
	// A module only the project has, named like an optional one the kernel tries: not for a cell either.
	expect((await run("import astroid")).error).toBe("ModuleNotFoundError: No module named 'astroid'");
	expect(await run("%cd sub\nimport other\nprint(other.VALUE)")).toMatchObject({ error: undefined });
	expect((await run("print(other.VALUE)")).stdout).toBe("other\n");
	await run(`%cd ${JSON.stringify(project)}`);
	const report = await saveKernelState(kernel, join(scratch(), "state"));
	expect(report.imports).toEqual({ mymodule: "mymodule", sys: "sys", json: "json", other: "other" });

	expect(await readdir(markers)).toEqual([]);
}, 60_000);
