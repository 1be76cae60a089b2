import { readFileSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { scratchDir, startKernel } from "./kernels.js";

const scratch = scratchDir("kernel-output-files-");

describe("an output folder that cannot be written", () => {
	it("ends a cell whose complete-output file cannot be written with an error naming the path, and runs the next cell", async () => {
		const blocker = join(scratch(), "not-a-folder");
		await writeFile(blocker, "a file where the output folder should be");
		const outputDir = join(blocker, "outputs");
		const kernel = await startKernel({ outputDir });
		const result = await kernel.execute("print('x' * 70_000)");
		expect(result.status).toBe("error");
		expect(result.error?.ename).toBe("OutputFileError");
		expect(result.error?.evalue).toContain(outputDir);
		expect(result.error?.evalue).toContain("ENOTDIR");
		expect(result.fullOutputPath).toBeUndefined();
		expect(result.stdout.startsWith("x".repeat(65_536))).toBe(true);
		expect(result.stderr).toBe(`[${result.error?.evalue}]\n`);
		expect((await kernel.execute("1 + 1")).result).toBe("2");
	});

	it("ends a cell whose spill file cannot be written mid-cell, keeping the visible output", async () => {
		const outputDir = join(scratch(), "spills");
		const kernel = await startKernel({ outputDir, memoryOutputLimit: 1_000 });
		await writeFile(outputDir, "the folder was replaced by a file");
		const result = await kernel.execute("for i in range(2000):\n    print(i)\nvalue = 7");
		expect(result.status).toBe("error");
		expect(result.error?.evalue).toContain(
			`Could not create the output folder (EEXIST: file already exists, mkdir '${outputDir}')`,
		);
		expect(result.stdout.split("\n").slice(0, 3)).toEqual(["0", "1", "2"]);
		expect(result.stdout.endsWith("1999\n")).toBe(true);
		expect((await kernel.execute("value")).result).toBe("7");
	});

	it("keeps the cell's own error when the output file fails too", async () => {
		const outputDir = join(scratch(), "own-error");
		await writeFile(outputDir, "a file");
		const kernel = await startKernel({ outputDir });
		const result = await kernel.execute("print('y' * 70_000)\nraise KeyError('mine')");
		expect(result.status).toBe("error");
		expect(result.error?.ename).toBe("KeyError");
		expect(result.stderr).toContain(
			`Could not create the output folder (EEXIST: file already exists, mkdir '${outputDir}')`,
		);
	});

	it("makes the output folder again when it was removed while the kernel runs", async () => {
		const outputDir = join(scratch(), "removed-later");
		const kernel = await startKernel({ outputDir });
		expect((await kernel.execute("print('a' * 70_000)")).fullOutputPath).toBeDefined();
		await rm(outputDir, { recursive: true, force: true });
		const again = await kernel.execute("print('b' * 70_000)");
		expect(again.status).toBe("ok");
		expect(readFileSync(again.fullOutputPath as string, "utf8")).toBe(`${"b".repeat(70_000)}\n`);
	});
});
