import { existsSync, readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { Outcome } from "../types.js";
import { createOutcomeScanner, parseOutcome } from "./index.js";

/** The labelled corpus, in the repository's `fixtures/`. */
const FIXTURES = fileURLToPath(new URL("../../../../fixtures/outputs", import.meta.url));

interface Meta {
	tool: string;
	command: string;
	exit_code: number;
	failing_ids: string[];
	error_types: string[];
	locations: string[];
	counts: Record<string, number> | null;
	outcome: "pass" | "fail" | "error";
}

interface Case {
	name: string;
	meta: Meta;
	output: string;
}

function loadCases(): Case[] {
	return readdirSync(FIXTURES, { withFileTypes: true })
		.filter((entry) => entry.isDirectory() && existsSync(`${FIXTURES}/${entry.name}/meta.json`))
		.map((entry) => ({
			name: entry.name,
			meta: JSON.parse(readFileSync(`${FIXTURES}/${entry.name}/meta.json`, "utf8")) as Meta,
			output: readFileSync(`${FIXTURES}/${entry.name}/output.txt`, "utf8"),
		}))
		.sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** The benchmark's rule: a label is found when it equals an id, or one contains the other. */
function idFound(label: string, ids: string[]): boolean {
	return ids.some((id) => id === label || id.includes(label) || label.includes(id));
}

/** A location label `path:line` matches a parsed location whose path ends with the label's path. */
function locationFound(label: string, outcome: Outcome): boolean {
	return outcome.locations.some((loc) => {
		const text = `${loc.file}:${loc.line}`;
		return text === label || text.endsWith(`/${label}`);
	});
}

function typeFound(label: string, outcome: Outcome): boolean {
	return outcome.exceptions.some((e) => e.type === label || e.type.endsWith(`.${label}`));
}

/**
 * Error types that the output never prints in a form a parser may trust, with the reason.
 * Every other label must be recalled.
 */
const UNPRINTED_TYPES: Record<string, string[]> = {
	// jest prints matcher failures without their class (`expect(received).toBe(expected)`).
	"023-ms-jest-edge-throw": ["Error"],
	"025-ms-jest-plural-threshold": ["Error"],
	"026-ms-jest-round-verbose-color": ["Error"],
	"081-npm-test-workspaces-vitest-jest": ["Error"],
	// node's junit report says ERR_TEST_FAILURE; the spec output never prints it.
	"038-whatwg-url-node-test-missing-generated": ["ERR_TEST_FAILURE"],
	// uvu's assertion class name (`Assertion`) is not printed, only its message.
	"047-dequal-uvu-date-regexp": ["Assertion"],
	"049-dequal-uvu-set-nocolor": ["Assertion"],
	"050-kleur-uvu-bold-code": ["Assertion"],
	// The directive problem has no rule id in stylish output.
	"056-ufo-eslint-stylish": ["unused-disable-directive"],
	// npx logs the class only in its debug log.
	"065-npx-missing-package": ["Error"],
	// vitest prints node's assertion error by its name alone; the code in its stack's first line is not printed.
	"074-mime-types-vitest-tree": ["AssertionError [ERR_ASSERTION]"],
	// pip prints its own exception classes only in its log file.
	"070-pip-editable-build-fail": [
		"pip._internal.exceptions.InstallationSubprocessError",
		"pip._internal.exceptions.MetadataGenerationFailed",
	],
};

/** Counts the labels hold (from the run's machine report) that the output never prints, with the reason. */
const UNPRINTED_COUNTS: Record<string, string[]> = {
	// The spec files that failed to load are printed as "Test Files  3 failed"; the report counts them as errors.
	"029-ptr-vitest-missing-tsconfig-base": ["errors"],
	// The report counts the uncaught error; the summary prints only tests and files.
	"031-ptr-vitest-throw-in-parse": ["errors"],
	// Node's dot reporter prints no tally, only the failures.
	"083-node-test-dot-reporter": ["passed"],
};

const cases = loadCases();

describe("labelled real outputs", () => {
	it("has the corpus", () => {
		expect(cases.length).toBeGreaterThanOrEqual(75);
	});

	describe.each(cases)("$name", ({ name, meta, output }) => {
		const outcome = parseOutcome(output, { tool: meta.tool, command: meta.command, exitCode: meta.exit_code });
		const textOnly = parseOutcome(output);

		it("finds every failing test id", () => {
			const missing = meta.failing_ids.filter((label) => !idFound(label, outcome.failingIds));
			expect(missing).toEqual([]);
		});

		it("tells the labelled failing tests apart (as many ids found as labels)", () => {
			// Tests of one title in several groups (mocha's spec reporter, node's nested spec output) are
			// labelled by their whole title paths: one id found by all of them lists one test of several.
			const found = outcome.failingIds.filter((id) => meta.failing_ids.some((label) => idFound(label, [id])));
			expect(found.length).toBeGreaterThanOrEqual(meta.failing_ids.length);
		});

		it("never calls a failed run a pass, even without the exit status", () => {
			if (meta.outcome !== "pass") {
				expect(outcome.status).toBe("fail");
				expect(textOnly.status).not.toBe("pass");
			} else {
				expect(outcome.status).not.toBe("fail");
				// A clean test run prints a clean summary, so its text alone reads as a pass; a diff has no verdict.
				expect(textOnly.status).toBe(meta.counts !== null ? "pass" : "unknown");
			}
		});

		it("recalls the error types it prints", () => {
			const skipped = UNPRINTED_TYPES[name] ?? [];
			const missing = meta.error_types.filter((label) => !skipped.includes(label) && !typeFound(label, outcome));
			expect(missing).toEqual([]);
		});

		it("recalls the source locations", () => {
			const missing = meta.locations.filter((label) => !locationFound(label, outcome));
			expect(missing).toEqual([]);
		});

		it("reads the counts the output prints, and makes none up", () => {
			const counts = outcome.counts;
			if (meta.counts === null) {
				// Not a test run (a build, a linter, a crash, a diff): no counts.
				expect(counts).toBeNull();
				return;
			}
			expect(counts, "a test run prints its counts").not.toBeNull();
			const unprinted = UNPRINTED_COUNTS[name] ?? [];
			for (const field of ["passed", "failed", "skipped", "errors", "xfailed"] as const) {
				if (unprinted.includes(field)) expect(counts?.[field], field).toBeUndefined();
				// A count of none often goes unsaid ("5 passed"): unsaid reads as 0.
				else expect(counts?.[field] ?? 0, field).toBe(meta.counts[field] ?? 0);
			}
		});

		it("gives the same outcome streamed line by line", () => {
			const scanner = createOutcomeScanner();
			const lines = output.split("\n");
			if (lines[lines.length - 1] === "") lines.pop();
			for (const [index, line] of lines.entries()) scanner.line(line, index + 1);
			expect(scanner.finish({ exitCode: meta.exit_code })).toEqual(outcome);
		});
	});
});
