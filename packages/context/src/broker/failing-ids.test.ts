import { describe, expect, it } from "vitest";
import { input, session } from "../../test/broker-session.js";
import type { SessionArchive } from "../archive/index.js";
import { REST_BY_FILE } from "../capsule/index.js";
import { runRecovery } from "../recovery/index.js";
import { memoryTaskStore } from "../task/index.js";
import { DEFAULT_CONFIG } from "../types.js";

/** Every page of each search's matches in one observation, joined. */
async function searchAll(archive: SessionArchive, id: string, queries: string[]): Promise<string> {
	const context = { sessionId: "s", archive, tasks: memoryTaskStore(), config: DEFAULT_CONFIG };
	const found: string[] = [];
	for (const query of queries) {
		for (let matchOffset = 0; ; matchOffset += 10) {
			const page = await runRecovery(context, { action: "search", id, query, matchOffset, maxMatches: 10 });
			if (!page.text.includes("matches")) break;
			found.push(page.text);
			if (!/more matches|matchOffset=/.test(page.text)) break;
		}
	}
	return found.join("\n");
}

describe("failing ids in capsules", () => {
	it("lists every failing id even when they exceed the budget, in the compact recovery-only form", async () => {
		const { broker } = await session();
		const ids = Array.from(
			{ length: 400 },
			(_, i) => `tests/test_matrix.py::TestGrid::test_cell_${i}_${(i * 37) % 101}`,
		);
		const lines = [
			"============================= test session starts ==============================",
			...ids.map((id) => `${id} FAILED${" ".repeat(20)}[ 50%]`),
			"=========================== short test summary info ============================",
			...ids.map((id) => `FAILED ${id} - AssertionError: grid mismatch`),
			"============================== 400 failed in 3.02s ==============================",
		];
		const result = await broker.observe(input(`${lines.join("\n")}\n`, { tool: "bash", exitCode: 1 }));
		expect(result.decision).toBe("structured-capsule");
		for (const id of ids) expect(result.text).toContain(id);
		expect(result.text).toContain("No excerpt fits this capsule");
		expect(result.text).toContain("TEST_RESULT FAIL 400 failed");
		expect(result.text).toMatch(/action=read id=obs_\d+ startLine=\d+ endLine=\d+/);
	});

	it("keeps a capsule of 4,000 failing tests under its ceiling, counting the rest per file with the search that finds them", async () => {
		const { broker, archive } = await session();
		const ids = Array.from({ length: 4000 }, (_, i) => `tests/test_grid_${i % 7}.py::test_cell_${i}`);
		const lines = [
			"=========================== short test summary info ============================",
			...ids.map((id) => `FAILED ${id} - AssertionError: grid mismatch`),
			"============================== 4000 failed in 9.02s ==============================",
		];
		const text = `${lines.join("\n")}\n`;
		const result = await broker.observe(input(text, { tool: "bash", exitCode: 1 }));
		expect(Buffer.byteLength(result.text)).toBeLessThanOrEqual(4 * DEFAULT_CONFIG.capsuleMaxBytes);
		const listed = ids.filter((id) => result.text.includes(`\n${id}\n`)).length;
		expect(result.text).toContain(`FAILING_TESTS (4000; ${listed} listed here, ${4000 - listed} more below):`);
		expect(result.text).toContain(`MORE_FAILING_TESTS (${4000 - listed}, counted per file; not listed here):`);
		expect(result.text).not.toContain("all listed");
		const groups = [...result.text.matchAll(/^tests\/test_grid_\d\.py: (\d+)$/gm)].map((m) => Number(m[1]));
		expect(groups.reduce((a, b) => a + b, 0)).toBe(4000 - listed);
		expect(result.text).toContain(`Search the rest: prime_context action=search id=${result.id} query="FAILED"`);
		const context = { sessionId: "s", archive, tasks: memoryTaskStore(), config: DEFAULT_CONFIG };
		const found = await runRecovery(context, { action: "search", id: result.id, query: "FAILED" });
		// Every failure line, and the summary ("4000 failed").
		expect(found.text).toContain("4001 matches");
	});

	it("gives a search for each mark of the unlisted ids: pytest's errors are not marked FAILED", async () => {
		const { broker, archive } = await session();
		const failed = Array.from({ length: 3000 }, (_, i) => `tests/test_grid.py::test_cell_${i}`);
		const errors = ["tests/test_zerr.py::test_needs_fixture", "tests/test_zerr.py::test_needs_db"];
		const lines = [
			"==================================== ERRORS ====================================",
			...errors.flatMap((id) => [
				`_____________ ERROR at setup of ${id.split("::")[1]} _____________`,
				"E   RuntimeError: fixture broke",
			]),
			"=========================== short test summary info ============================",
			...failed.map((id) => `FAILED ${id} - AssertionError: grid mismatch`),
			...errors.map((id) => `ERROR ${id} - RuntimeError: fixture broke`),
			"======================= 3000 failed, 2 errors in 9.02s ========================",
		];
		const result = await broker.observe(input(`${lines.join("\n")}\n`, { tool: "bash", exitCode: 1 }));
		const hints = [...result.text.matchAll(/^Search the rest: prime_context action=search id=obs_\d+ query="(.*)"$/gm)];
		expect(hints.map((hint) => hint[1])).toEqual(["FAILED", "ERROR"]);
		const all = await searchAll(
			archive,
			result.id,
			hints.map((hint) => hint[1]),
		);
		for (const id of [...errors, ...failed]) {
			if (!result.text.includes(`\n${id}\n`)) expect(all).toContain(id);
		}
	});

	it("reads the marks of the unlisted ids from every id's line, not from the lines the capsule kept (pytest -v, errors first)", async () => {
		const { broker, archive } = await session();
		const errors = Array.from({ length: 1000 }, (_, i) => `tests/test_setup.py::test_needs_db_${i}`);
		const failed = Array.from({ length: 1900 }, (_, i) => `tests/test_grid.py::test_cell_${i}`);
		const lines = [
			"============================= test session starts ==============================",
			...errors.map((id) => `${id} ERROR${" ".repeat(12)}[ 10%]`),
			...failed.map((id) => `${id} FAILED${" ".repeat(11)}[ 60%]`),
			// No short summary (`-rN`): the failures' marks are on their progress lines only.
			"=================================== FAILURES ===================================",
			...failed
				.slice(0, 20)
				.flatMap((id, i) => [
					`_______________________ ${id.split("::")[1]} _______________________`,
					`tests/test_grid.py:${10 + i}: in ${id.split("::")[1]}`,
					"E   AssertionError: grid mismatch",
				]),
			"==================== 1900 failed, 1000 errors in 19.02s ====================",
		];
		const result = await broker.observe(input(`${lines.join("\n")}\n`, { tool: "bash", exitCode: 1 }));
		const hints = [...result.text.matchAll(/^Search the rest: prime_context action=search id=obs_\d+ query="(.*)"$/gm)];
		// The mark under which most ids were printed first; every id is under one of them, so no file note.
		expect(hints.map((hint) => hint[1])).toEqual(["FAILED", "ERROR"]);
		expect(result.text).not.toContain(REST_BY_FILE);
		const all = await searchAll(archive, result.id, ["FAILED", "ERROR"]);
		let unlisted = 0;
		for (const id of [...errors, ...failed]) {
			if (result.text.includes(`\n${id}\n`)) continue;
			unlisted++;
			expect(all).toContain(id);
		}
		expect(unlisted).toBeGreaterThan(2000);
	});

	it("keeps room for locations when the failing ids overflow the ceiling, so both kinds survive", async () => {
		const { broker } = await session();
		const ids = Array.from({ length: 3000 }, (_, i) => `tests/test_grid_${i % 7}.py::test_cell_${i}`);
		const lines = [
			"=================================== FAILURES ===================================",
			...ids.flatMap((id, i) => [
				`tests/test_grid_${i % 7}.py:${100 + i}: in ${id.split("::")[1]}`,
				"E   assert 1 == 2",
			]),
			"=========================== short test summary info ============================",
			...ids.map((id) => `FAILED ${id} - assert 1 == 2`),
			"============================== 3000 failed in 9.02s ==============================",
		];
		const result = await broker.observe(input(`${lines.join("\n")}\n`, { tool: "bash", exitCode: 1 }));
		expect(Buffer.byteLength(result.text)).toBeLessThanOrEqual(4 * DEFAULT_CONFIG.capsuleMaxBytes);
		const listed = ids.filter((id) => result.text.includes(`\n${id}\n`)).length;
		expect(result.text).toContain(`FAILING_TESTS (3000; ${listed} listed here, ${3000 - listed} more below):`);
		expect(listed).toBeGreaterThan(300);
		const header = /\nLOCATIONS \((\d+) in 7 files; each line is path:line,line,\.\.\.\):\n/.exec(result.text);
		expect(header?.[1]).toBe("3000");
		const rows = [...result.text.matchAll(/^tests\/test_grid_\d\.py:(\d+(?:,\d+)*)$/gm)];
		const shown = rows.reduce((sum, row) => sum + row[1].split(",").length, 0);
		expect(shown).toBeGreaterThan(300);
		expect(result.text).toContain(`(+${3000 - shown} more locations in `);
	});

	it("never says all listed past the ids it records", async () => {
		const { broker } = await session();
		const lines = Array.from({ length: 6000 }, (_, i) => `not ok ${i + 1} - case ${i}`);
		const result = await broker.observe(
			input(`TAP version 13\n${lines.join("\n")}\n1..6000\n`, { tool: "bash", exitCode: 1 }),
		);
		expect(result.text).not.toContain("all listed");
		expect(result.text).toMatch(/FAILING_TESTS \(6000; \d+ listed here/);
		expect(result.text).toContain("(+1000 past the first 5000 recorded; not grouped)");
		expect(result.text).toContain('query="not ok"');
	});

	it("gives no by-file note when every id is under a searched mark: a traceback header's short name is its whole id's", async () => {
		const { broker, archive } = await session();
		const ids = Array.from({ length: 1000 }, (_, i) => `tests/test_f.py::test_value[${i}]`);
		const lines = [
			"=================================== FAILURES ===================================",
			...ids.flatMap((_, i) => [
				`_______________________________ test_value[${i}] ________________________________`,
				`tests/test_f.py:4: in test_value`,
				`E   assert ${i} == -1`,
			]),
			"=========================== short test summary info ============================",
			...ids.map((id, i) => `FAILED ${id} - assert ${i} == -1`),
			"============================= 1000 failed in 1.23s =============================",
		];
		const result = await broker.observe(input(`${lines.join("\n")}\n`, { tool: "bash", exitCode: 1 }));
		expect(result.text).toContain("more below):");
		const hints = [...result.text.matchAll(/^Search the rest: prime_context action=search id=obs_\d+ query="(.*)"$/gm)];
		expect(hints.map((hint) => hint[1])).toEqual(["FAILED"]);
		expect(result.text).not.toContain(REST_BY_FILE);
		const all = await searchAll(archive, result.id, ["FAILED"]);
		for (const id of ids) if (!result.text.includes(`\n${id}\n`)) expect(all).toContain(id);
	});

	it("does not say all listed when the run counts more failed tests than it names: one name failing in two files", async () => {
		const { broker, archive } = await session();
		const failure = (file: string, expected: number) => [
			"✖ same name (2.1ms)",
			"  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
			"  ",
			`  1 !== ${expected}`,
			"  ",
			`      at TestContext.<anonymous> (file:///work/${file}:2:34)`,
		];
		const passing = Array.from({ length: 600 }, (_, i) => `✔ parses case ${i} of the calendar grid (0.4ms)`);
		const lines = [
			...passing,
			...failure("a.test.mjs", 2),
			...failure("b.test.mjs", 3),
			"ℹ tests 602",
			"ℹ suites 0",
			"ℹ pass 600",
			"ℹ fail 2",
		];
		const result = await broker.observe(input(`${lines.join("\n")}\n`, { tool: "bash", exitCode: 1 }));
		expect(result.decision).toBe("structured-capsule");
		expect(result.text).toContain(
			"FAILING_TESTS (1 listed, 2 counted failed; the others share a listed name, are suites failing through their tests, or were not read as ids):\nsame name\n",
		);
		expect(result.text).not.toContain("all listed");
		expect(result.text).toContain(`Search the rest: prime_context action=search id=${result.id} query="✖"`);
		expect(await searchAll(archive, result.id, ["✖"])).toContain("2 matches");
	});
});
