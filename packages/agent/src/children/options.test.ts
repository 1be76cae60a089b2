import { expect, it } from "vitest";
import { UserError } from "../errors.js";
import { ChildManager } from "./manager.js";
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

it("rlm.delete_subagent() with a bad name names delete_subagent in its error, not rlm(name=...)", async () => {
	const manager = new ChildManager({
		parent: {
			sessionFile: "/s.jsonl",
			artifactDir: "/s",
			leafId: () => null,
			appendCustom: () => {},
			deliver: () => {},
		},
		depth: 0,
		maxDepth: 1,
		parentModel: () => "p/m",
		checkModel: (ref) => ref,
		launch: () => Promise.reject(new Error("not used")),
	});
	await expect(manager.delete("bad name")).rejects.toThrow(
		'rlm.delete_subagent(...): "bad name" is not a valid name; use letters, digits, ".", "_" and "-", starting with a letter or digit.',
	);
	await expect(manager.delete("n".repeat(65))).rejects.toThrow(
		"rlm.delete_subagent(...): the name has 65 characters; at most 64 are allowed.",
	);
});
