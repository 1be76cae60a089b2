import { describe, expect, it } from "vitest";
import { parseRange } from "./args.js";

describe("line ranges on the command line", () => {
	it("accept start:end, start: and one line", () => {
		expect(parseRange("200:279")).toEqual({ startLine: 200, endLine: 279 });
		expect(parseRange("200:")).toEqual({ startLine: 200, endLine: undefined });
		expect(parseRange("7")).toEqual({ startLine: 7, endLine: 7 });
	});

	it("say that lines are numbered from 1 when a range starts at 0", () => {
		expect(() => parseRange("0:3")).toThrow("starts at line 0, but lines are numbered from 1; e.g. 1:3");
	});

	it("say that a backwards range ends before it starts, with the range the other way round", () => {
		expect(() => parseRange("5:2")).toThrow("ends before it starts; write start:end with start <= end, e.g. 2:5");
	});
});
