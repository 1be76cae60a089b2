import { readFileSync } from "node:fs";
import { TRUNCATION_MARKER, VISIBLE_OUTPUT_CAP } from "prime-agent-kernel";
import { expect, it } from "vitest";
import { MAX_NAME_LENGTH, PREVIEW_LIMIT } from "../src/children/index.js";
import { HELP } from "../src/cli/index.js";
import { SUPERVISOR_IDLE_EXIT_MS } from "../src/daemon/index.js";
import { ExitCode } from "../src/errors.js";
import { DEFAULT_MCP_TIMEOUT_MS, MAX_MCP_TIMEOUT_MS } from "../src/mcp/index.js";
import { MAX_MESSAGE_CHARS, MAX_PENDING, MAX_SENDS_PER_MINUTE } from "../src/messages/index.js";
import { CONTEXT_FILE_MAX_CHARS } from "../src/prompt/index.js";
import { DEFAULT_CONTEXT_WINDOW, DEFAULT_MAX_TOKENS } from "../src/providers/index.js";
import { MAX_LINE_BYTES, MAX_NESTING } from "../src/session/index.js";
import {
	CREATOR_TRAJECTORY_CHARS,
	IMPORT_CHECK_TIMEOUT_MS,
	MAX_SKILL_BYTES,
	MAX_SKILL_FILES,
	SKILL_DESCRIPTION_CHARS,
	SKILL_INDEX_LIMIT,
} from "../src/skills/index.js";

// Compared with line breaks folded, so rewrapping a paragraph does not matter.
const README = readFileSync(new URL("../README.md", import.meta.url), "utf8").replace(/\s+/g, " ");
const grouped = (n: number) => n.toLocaleString("en-US");

it("the numbers the README states are the ones the code uses", () => {
	expect(README).toContain(grouped(VISIBLE_OUTPUT_CAP));
	expect(README).toContain(TRUNCATION_MARKER);
	expect(README).toContain(
		`a line longer than ${MAX_LINE_BYTES / 1024 / 1024} MB or nesting arrays and objects more than ${MAX_NESTING} levels`,
	);
	expect(README).toContain(`\`contextWindow\` default ${DEFAULT_CONTEXT_WINDOW}`);
	expect(README).toContain(`\`maxTokens\` default ${DEFAULT_MAX_TOKENS}`);
	expect(README).toContain(grouped(CONTEXT_FILE_MAX_CHARS));
	expect(README).toContain(
		`most ${grouped(MAX_MESSAGE_CHARS)} characters a message, ${MAX_PENDING} unread messages per receiver`,
	);
	expect(README).toContain(`${MAX_SENDS_PER_MINUTE} sends a minute per sender`);
	expect(README).toContain(`a preview of at most ${PREVIEW_LIMIT} characters of its last text`);
	expect(README).toContain(`at most ${MAX_NAME_LENGTH} characters of letters`);
	expect(README).toContain(`(ms per call, default ${DEFAULT_MCP_TIMEOUT_MS}, at most ${MAX_MCP_TIMEOUT_MS}:`);
	expect(README).toContain(
		`(each cut to ${SKILL_DESCRIPTION_CHARS} characters) of at most ${SKILL_INDEX_LIMIT} skills sorted by name`,
	);
	expect(README).toContain(`newest ${grouped(CREATOR_TRAJECTORY_CHARS)} characters of the trajectory`);
	expect(README).toContain(`(at most ${MAX_SKILL_FILES} files, ${MAX_SKILL_BYTES / 1024} KiB)`);
	expect(README).toContain(`(the kernel's interpreter, ${IMPORT_CHECK_TIMEOUT_MS / 1000} s limit)`);
	expect(README).toContain(`With nothing to supervise for ${SUPERVISOR_IDLE_EXIT_MS / 60_000} minutes`);
	for (const [name, code] of Object.entries(ExitCode)) {
		expect(README, `exit code ${name}`).toContain(`\`${code}\``);
		expect(HELP, `exit code ${name}`).toContain(`${code} `);
	}
});
