import { expect, it } from "vitest";
import { UserError } from "../errors.js";
import { preview } from "./notices.js";
import { defaultName, resolveMaxDepth } from "./options.js";

it("default names come from the task's first words and stay unique among siblings", () => {
	expect(defaultName("Fix the parser's date handling, please", new Set())).toBe("fix-the-parser-s");
	expect(defaultName("Fix the parser's date handling", new Set(["fix-the-parser-s"]))).toBe("fix-the-parser-s-2");
	expect(defaultName("Fix the parser's", new Set(["fix-the-parser-s", "fix-the-parser-s-2"]))).toBe(
		"fix-the-parser-s-3",
	);
	expect(defaultName("!!!", new Set())).toBe("child");
	expect(defaultName("x".repeat(100), new Set())).toHaveLength(40);
});

it("a preview is the last text on one line, at most 160 characters, marked when cut", () => {
	expect(preview("  done:\n all   green ")).toBe("done: all green");
	expect(preview("y".repeat(160))).toBe("y".repeat(160));
	expect(preview("y".repeat(161))).toBe(`${"y".repeat(159)}…`);
});

it("the depth limit: RLM_MAX_DEPTH wins over settings, default 1, and a bad value says where it came from", () => {
	expect(resolveMaxDepth({}, undefined)).toBe(1);
	expect(resolveMaxDepth({}, 3)).toBe(3);
	expect(resolveMaxDepth({ RLM_MAX_DEPTH: "0" }, 3)).toBe(0);
	expect(() => resolveMaxDepth({ RLM_MAX_DEPTH: "two" }, undefined)).toThrow(UserError);
	expect(() => resolveMaxDepth({ RLM_MAX_DEPTH: "two" }, undefined)).toThrow(
		'RLM_MAX_DEPTH is "two", not a whole number of 0 or more.',
	);
	expect(() => resolveMaxDepth({}, -1, "/home/u/.prime/agent/settings.json")).toThrow(
		'"rlm": {"maxDepth": ...} in /home/u/.prime/agent/settings.json must be a whole number of 0 or more.',
	);
});
