import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TRUNCATION_MARKER, VISIBLE_OUTPUT_CAP } from "../types.js";
import { CellOutput } from "./cell-output.js";
import { capText, formatCellOutput } from "./format.js";

let dir: string;

beforeEach(async () => {
	dir = await mkdtemp(join(tmpdir(), "cell-output-test-"));
});

afterEach(async () => {
	await rm(dir, { recursive: true, force: true });
});

describe("formatCellOutput", () => {
	it("lays out stdout, stderr, result and traceback in that order, each on its own lines", () => {
		const text = formatCellOutput({
			stdout: "out",
			stderr: "err\n",
			result: "42",
			error: { ename: "E", evalue: "v", traceback: ["line 1", "E: v"] },
		});
		expect(text).toBe("out\nerr\n42\nline 1\nE: v");
	});

	it("shows ename and evalue when an error has no traceback", () => {
		expect(
			formatCellOutput({ stdout: "", stderr: "", error: { ename: "KernelDied", evalue: "gone", traceback: [] } }),
		).toBe("KernelDied: gone");
	});
});

describe("capping visible text", () => {
	it("ends a cut text with the exact marker line and leaves a short one alone", () => {
		expect(capText("short", 10, TRUNCATION_MARKER)).toEqual({ text: "short", truncated: false });
		expect(capText("abcdefghijkl", 10, TRUNCATION_MARKER)).toEqual({
			text: `abcdefghij\n${TRUNCATION_MARKER}`,
			truncated: true,
		});
	});

	it("never cuts a surrogate pair in half", () => {
		const text = `${"a".repeat(9)}😀tail`;
		expect(capText(text, 10, TRUNCATION_MARKER).text).toBe(`${"a".repeat(9)}\n${TRUNCATION_MARKER}`);
	});
});

describe("collecting a cell's output", () => {
	it("spills past the memory limit and still writes every byte of interleaved streams in layout order", async () => {
		const output = new CellOutput({ memoryLimit: 1000, dir: () => dir, name: "cell-1" });
		let stdout = "";
		let stderr = "";
		for (let i = 0; i < 2000; i++) {
			const out = `out ${i} é\n`;
			const err = `err ${i}\n`;
			output.append("stdout", out);
			output.append("stderr", err);
			stdout += out;
			stderr += err;
		}
		output.setResult("'done'");
		const collected = output.finish();
		expect(collected.truncated.stdout).toBe(false);
		expect(collected.stdout).toBe(stdout);
		const full = await readFile(collected.fullOutputPath as string, "utf8");
		expect(full).toBe(formatCellOutput({ stdout, stderr, result: "'done'" }));
		expect(collected.fullOutputBytes).toBe(Buffer.byteLength(full));
		expect(await readdir(dir)).toEqual(["cell-1.out.txt"]);
	});

	it("caps each stream at the visible limit independently", () => {
		const output = new CellOutput({ memoryLimit: 1 << 20, dir: () => dir, name: "cell-2" });
		output.append("stdout", "x".repeat(VISIBLE_OUTPUT_CAP));
		output.append("stderr", "y".repeat(VISIBLE_OUTPUT_CAP + 1));
		const collected = output.finish();
		expect(collected.truncated).toEqual({ stdout: false, stderr: true, result: false, error: false });
		expect(collected.stdout).toBe("x".repeat(VISIBLE_OUTPUT_CAP));
		expect(collected.stderr).toBe(`${"y".repeat(VISIBLE_OUTPUT_CAP)}\n${TRUNCATION_MARKER}`);
		expect(collected.fullOutputPath).toBeDefined();
	});
});

describe("what a kernel on another machine cut", () => {
	it("is the cut text in the complete output, then a line naming the whole text's file on that machine", async () => {
		const output = new CellOutput({ memoryLimit: 1 << 20, dir: () => dir, name: "remote-cut" });
		const path = "/tmp/prime-kernel-x/outputs/kernel-0123abcd.error.txt";
		output.setError(
			{ ename: "ValueError", evalue: "EEE\n[... 9 chars truncated ...]", traceback: [] },
			{ elsewhere: path },
		);
		const collected = output.finish();
		expect(collected.fileError).toBeUndefined();
		expect(collected.truncated.error).toBe(true);
		expect(await readFile(collected.fullOutputPath as string, "utf8")).toBe(
			`ValueError: EEE\n[... 9 chars truncated ...]\n[... the whole text is in ${path} on the kernel's machine ...]`,
		);
	});
});
