import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { kernelPythonForTests } from "prime-agent-test-support/kernel-python";
import { makeTempWorld, type TempWorld } from "prime-agent-test-support/temp-home";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionKernel } from "../src/tools/index.js";

let world: TempWorld;
let kernel: SessionKernel;
beforeAll(() => {
	world = makeTempWorld();
	kernel = new SessionKernel({
		cwd: world.project,
		outputDir: join(world.home, "outputs"),
		python: kernelPythonForTests(),
	});
});
afterAll(async () => {
	await kernel.dispose();
	world.cleanup();
});

describe("await edit(path, old, new) in a real kernel", () => {
	it("replaces exactly one match, keeps line endings and permissions, and reports the diff to the host", async () => {
		const path = join(world.project, "crlf.txt");
		writeFileSync(path, "alpha\r\nbeta\r\ngamma\r\n");
		chmodSync(path, 0o640);
		const run = await kernel.run('print(await edit("crlf.txt", "beta", "BETA"))');
		expect(run.cell.status).toBe("ok");
		expect(run.cell.stdout).toBe("Edited crlf.txt: +1 -1 lines\n");
		expect(readFileSync(path, "utf8")).toBe("alpha\r\nBETA\r\ngamma\r\n");
		expect(statSync(path).mode & 0o777).toBe(0o640);
		expect(run.diffs).toHaveLength(1);
		expect(run.diffs[0]).toMatchObject({ path, added: 1, removed: 1 });
		expect(run.diffs[0]?.diff).toContain("-beta");
	});

	it.each([
		["no match", 'await edit("two.txt", "zeta", "x")', "EditError", "was not found in two.txt"],
		["several matches", 'await edit("two.txt", "same", "x")', "EditError", "occurs 2 times in two.txt"],
		["a missing file", 'await edit("missing.txt", "a", "b")', "FileNotFoundError", "no file at"],
		["an empty old text", 'await edit("two.txt", "", "x")', "EditError", "must not be empty"],
	])("refuses %s with a clear error and leaves the file alone", async (_what, code, ename, message) => {
		writeFileSync(join(world.project, "two.txt"), "same\nsame\n");
		const run = await kernel.run(code);
		expect(run.cell.status).toBe("error");
		expect(run.cell.error?.ename).toBe(ename);
		expect(run.cell.error?.evalue).toContain(message);
		expect(run.diffs).toEqual([]);
		expect(readFileSync(join(world.project, "two.txt"), "utf8")).toBe("same\nsame\n");
	});

	it("follows %cd for relative paths", async () => {
		writeFileSync(join(world.project, "here.txt"), "one\n");
		const run = await kernel.run('%cd /\nawait edit("here.txt", "one", "two")');
		expect(run.cell.status).toBe("error");
		expect(run.cell.error?.evalue).toContain("relative paths start at /");
		await kernel.run(`%cd ${world.project}`);
	});

	it("the names the system prompt promises are defined", async () => {
		const run = await kernel.run("print(callable(edit), asyncio.__name__)");
		expect(run.cell.stdout).toBe("True asyncio\n");
	});
});
