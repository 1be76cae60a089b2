import { describe, expect, it } from "vitest";
import { isInterruptError } from "./cell-run.js";

/** What `%%bash` raised after an interrupt, exactly as IPython 9 and CPython 3.11 state it. */
const script = `Command 'b"trap 'exit 130' INT\\necho sleeping\\nsleep 30 &\\nwait\\n"'`;

describe("isInterruptError", () => {
	it("counts every way an interrupted subprocess is reported as the interrupt's", () => {
		for (const ending of [
			"died with <Signals.SIGINT: 2>.",
			"died with <Signals.SIGTERM: 15>.",
			"died with <Signals.SIGKILL: 9>.",
			"returned non-zero exit status 130.",
			"returned non-zero exit status 255.",
		]) {
			expect(isInterruptError({ ename: "CalledProcessError", evalue: `${script} ${ending}` })).toBe(true);
		}
		expect(isInterruptError({ ename: "KeyboardInterrupt", evalue: "" })).toBe(true);
		expect(isInterruptError({ ename: "CancelledError", evalue: "" })).toBe(true);
	});

	it("leaves the script's own failures and other errors the cell's", () => {
		for (const ending of [
			"returned non-zero exit status 1.",
			"returned non-zero exit status 2.",
			"returned non-zero exit status 1300.",
			"returned non-zero exit status 25.",
			"died with <Signals.SIGSEGV: 11>.",
		]) {
			expect(isInterruptError({ ename: "CalledProcessError", evalue: `${script} ${ending}` })).toBe(false);
		}
		expect(isInterruptError({ ename: "ValueError", evalue: "exit status 130" })).toBe(false);
	});
});
