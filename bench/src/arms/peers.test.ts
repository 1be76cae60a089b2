import { describe, expect, it } from "vitest";
import { CLAUDE_CODE, claudeCode, codex, contextMode, maskedStub, pi, raw, rlm } from "./peers.js";

const numbered = (count: number, width = 10) =>
	Array.from({ length: count }, (_, index) => `line ${index + 1} `.padEnd(width, "x")).join("\n");
const bytes = (text: string) => Buffer.byteLength(text, "utf8");

describe("raw", () => {
	it("returns the output unchanged", () => {
		expect(raw("a\nb")).toBe("a\nb");
	});
});

describe("codex: first 128 + last 128 lines within 10 KiB", () => {
	it("shows output within 256 lines and 10 KiB whole", () => {
		const text = numbered(256);
		expect(codex(text)).toBe(text);
	});

	it("keeps the first and last 128 lines of a long output with an omitted-lines marker", () => {
		const view = codex(numbered(1000));
		const lines = view.split("\n");
		expect(lines.slice(0, 128)).toEqual(numbered(128).split("\n"));
		expect(view).toContain("[... omitted 744 of 1000 lines ...]");
		expect(lines.at(-1)).toBe("line 1000 ");
		expect(view).toContain("line 873 ");
		expect(view).not.toContain("line 872 ");
	});

	it("holds long lines to half the budget for the head and 10 KiB in all", () => {
		const view = codex(numbered(300, 200));
		const [head] = view.split("\n[... omitted");
		expect(bytes(head)).toBeLessThanOrEqual(5 * 1024);
		expect(bytes(view)).toBeLessThanOrEqual(10 * 1024);
		expect(view).toContain("[... omitted 44 of 300 lines ...]");
		expect(view.split("\n").at(-1)?.startsWith("line 300 ")).toBe(true);
	});

	it("cuts a few huge lines to the first 5 KiB when all of them fit in the head", () => {
		const view = codex(numbered(10, 5_000));
		expect(bytes(view)).toBeLessThanOrEqual(5 * 1024 + 40);
		expect(view.startsWith("line 1 ")).toBe(true);
		expect(view.includes("line 3 ")).toBe(false);
	});
});

describe("claude-code: over 30,000 characters becomes a 2,000-character preview", () => {
	it("shows 30,000 characters whole", () => {
		const text = "y".repeat(CLAUDE_CODE.thresholdChars);
		expect(claudeCode(text)).toBe(text);
	});

	it("keeps only the first 2,000 characters of a longer output", () => {
		const text = `${"a".repeat(2_000)}${"b".repeat(28_001)}`;
		const view = claudeCode(text);
		expect(view).toContain("a".repeat(2_000));
		expect(view).not.toContain("b");
		expect(view).toContain("Output too large");
	});
});

describe("pi: last 2,000 lines or 50 KB, whichever is smaller", () => {
	it("keeps the last 2,000 lines of a long output and says which", () => {
		const view = pi(numbered(3_000));
		expect(view.startsWith("line 1001 ")).toBe(true);
		expect(view).toContain("line 3000 ");
		expect(view).not.toContain("line 1000 ");
		expect(view).toContain("[Showing lines 1001-3000 of 3000.");
	});

	it("stops at 50 KB of whole lines when that comes first", () => {
		const view = pi(numbered(100, 1_023));
		const body = view.split("\n\n[Showing")[0];
		expect(bytes(body)).toBeLessThanOrEqual(50 * 1024);
		expect(body.startsWith("line 51 ")).toBe(true);
		expect(view).toContain("[Showing lines 51-100 of 100.");
	});
});

describe("rlm: first 20,000 characters", () => {
	it("cuts a longer output to its first 20,000 characters", () => {
		const view = rlm(`${"a".repeat(20_000)}${"b".repeat(5_000)}`);
		expect(view.startsWith("a".repeat(20_000))).toBe(true);
		expect(view).not.toContain("b");
		expect(rlm("short")).toBe("short");
	});
});

describe("context-mode: first 60% + last 40% of lines within 100 KB", () => {
	it("shows output within 100 KB whole", () => {
		const text = numbered(1_000, 100);
		expect(contextMode(text)).toBe(text);
	});

	it("keeps whole head lines within 60 KB and tail lines within 40 KB", () => {
		const view = contextMode(numbered(4_000, 99));
		const [head, rest] = view.split("\n\n... [");
		const tail = rest.split("] ...\n\n")[1];
		expect(bytes(head)).toBeLessThanOrEqual(61_440);
		expect(bytes(head)).toBeGreaterThan(61_440 - 100);
		expect(bytes(tail)).toBeLessThanOrEqual(40_960);
		expect(head.startsWith("line 1 ")).toBe(true);
		expect(tail.endsWith("x")).toBe(true);
		expect(tail.split("\n").at(-1)?.startsWith("line 4000 ")).toBe(true);
		expect(view).toMatch(/showing first 614 \+ last 409 lines/);
	});
});

describe("last-5 masking stub", () => {
	it("replaces an old observation with one line naming how many lines it had", () => {
		expect(maskedStub("a\nb\nc")).toBe("Old environment output: (3 lines omitted)");
	});
});
