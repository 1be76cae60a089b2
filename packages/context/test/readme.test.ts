import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { CHUNK_BYTES } from "../src/archive/index.js";
import { BINARY_ODD_SHARE } from "../src/archive/text-check.js";
import { CLEAN_CAPSULE_BYTES, FAILING_IDS_CEILING } from "../src/capsule/index.js";
import { CONFIG_RULES } from "../src/config/index.js";
import { DEFAULT_CONFIG, RECOVERY_LIMITS } from "../src/types.js";
import { COMPLETION_GUARD, GOAL_READY_GUARD, UNLOCKED_GUARD } from "../src/workflow/index.js";

const readme = () => readFile(fileURLToPath(new URL("../README.md", import.meta.url)), "utf8");

it("states the same defaults as the code", async () => {
	const text = await readme();
	const block = /Defaults:\n\n```json\n([\s\S]*?)```/.exec(text);
	expect(JSON.parse(block?.[1] ?? "null")).toEqual(DEFAULT_CONFIG);
});

it("states the same limits as the code", async () => {
	const text = await readme();
	expect(text).toContain(`at most ${RECOVERY_LIMITS.listMax} observations`);
	expect(text).toContain(`at most ${RECOVERY_LIMITS.readMaxLines} lines`);
	expect(text).toContain(`at most ${RECOVERY_LIMITS.searchMaxMatches} matches`);
	expect(text).toContain(`\`contextLines\` 0-${RECOVERY_LIMITS.contextLinesMax}`);
	expect(text).toContain(`${RECOVERY_LIMITS.responseMaxBytes / 1024} KiB (${RECOVERY_LIMITS.responseMaxBytes} bytes`);
	expect(text).toContain(`about ${CHUNK_BYTES / 1024} KiB`);
	expect(text).toContain(`a ceiling of ${FAILING_IDS_CEILING}x its budget`);
	expect(text).toContain(`over ${BINARY_ODD_SHARE * 100}% of its bytes are`);
	for (const [key, rule] of Object.entries(CONFIG_RULES)) {
		const row = text.split("\n").find((line) => line.startsWith(`| \`${key}\``));
		expect(row, key).toBeDefined();
		const min = /at least (\d+)/.exec(rule.describe)?.[1];
		// A number's lower bound, or the two values a switch takes.
		expect(row, key).toContain(min ? `integer >= ${min}` : "`true` or `false`");
	}
});

it("states the workflow guards exactly as the code", async () => {
	const text = await readme();
	for (const guard of [UNLOCKED_GUARD, COMPLETION_GUARD, GOAL_READY_GUARD]) expect(text).toContain(`| \`${guard}\` |`);
	expect(text).toContain(`less than its usual ${CLEAN_CAPSULE_BYTES} bytes`);
});
