import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { sharedKernel, startKernel, wholeText } from "./kernels.js";

const kernel = sharedKernel();

describe("caps on what a cell brings back", () => {
	it("caps a 300,000-character exception message and its traceback, keeping both whole in the complete output", async () => {
		const result = await kernel().execute("raise ValueError('E' * 300_000 + 'END')");
		expect(result.status).toBe("error");
		expect(result.truncated.error).toBe(true);
		expect(result.error?.evalue.length).toBeLessThan(65_536 + 100);
		expect(result.error?.evalue.endsWith("[... 234467 chars truncated ...]")).toBe(true);
		const shown = result.error?.traceback.join("\n") ?? "";
		expect(shown.length).toBeLessThanOrEqual(65_536 + 100);
		expect(result.fullOutputPath).toBeDefined();
		const complete = wholeText(readFileSync(result.fullOutputPath as string, "utf8"));
		expect(complete).toContain(`ValueError: ${"E".repeat(300_000)}END`);
	});

	it("keeps a traceback's first and last lines when it has too many", async () => {
		// Distinct functions, so IPython cannot fold the frames into one "similar frames" line.
		const result = await kernel().execute(
			[
				"import sys",
				"sys.setrecursionlimit(10_000)",
				"chain = '\\n'.join(f'def step_{i:04d}_of_a_long_chain():\\n    return step_{i + 1:04d}_of_a_long_chain()' for i in range(800))",
				"exec(chain + '\\ndef step_0800_of_a_long_chain():\\n    return 1 / 0')",
				"step_0000_of_a_long_chain()",
			].join("\n"),
		);
		const lines = result.error?.traceback ?? [];
		expect(result.error?.ename).toBe("ZeroDivisionError");
		expect(lines.join("\n").length).toBeLessThanOrEqual(65_536);
		expect(lines.some((line) => /^\[\.\.\. \d+ traceback lines truncated \.\.\.\]$/.test(line))).toBe(true);
		expect(lines.at(-1)).toContain("ZeroDivisionError: division by zero");
		expect(lines.slice(0, 3).join("\n")).toContain("Traceback (most recent call last)");
	});

	it("keeps large displays' text and names the files holding the rest", async () => {
		const result = await kernel().execute(
			"from IPython.display import display\nfor i in range(3):\n    display({'text/plain': f'table {i}', 'text/html': 'x' * 2_000_000}, raw=True)",
		);
		expect(result.displays.length).toBe(3);
		for (const [i, display] of result.displays.entries()) {
			const path = display.saved?.[0].path as string;
			expect(display.data).toEqual({
				"text/plain": `table ${i}\n[... text/html of 2000000 characters, too large to show, saved to ${path} ...]`,
			});
			expect(readFileSync(path, "utf8")).toBe("x".repeat(2_000_000));
		}
	});

	it("writes displays past the cell's memory limit to JSON files, keeping their text", async () => {
		const small = await startKernel({ memoryOutputLimit: 100_000 });
		const result = await small.execute(
			"from IPython.display import display\nfor i in range(3):\n    display({'text/plain': f'table {i}', 'text/html': 'x' * 40_000}, raw=True)",
		);
		expect(result.displays.map((display) => display.fullDataPath === undefined)).toEqual([true, true, false]);
		const last = result.displays[2];
		expect(last.data).toEqual({ "text/plain": "table 2" });
		const whole = JSON.parse(readFileSync(last.fullDataPath as string, "utf8"));
		expect(whole.data["text/html"]).toBe("x".repeat(40_000));
	});

	it("keeps small displays whole", async () => {
		const result = await kernel().execute("from IPython.display import display, HTML\ndisplay(HTML('<b>hi</b>'))");
		expect(result.displays.length).toBe(1);
		expect(result.displays[0].data["text/html"]).toBe("<b>hi</b>");
		expect(result.displays[0].fullDataPath).toBeUndefined();
	});
});
