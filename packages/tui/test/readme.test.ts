import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { ARCHIVE_PAGE_LINES } from "../src/components/capsule.js";
import { COLLAPSED_CODE_LINES, COLLAPSED_OUTPUT_LINES, EXPANDED_OUTPUT_LINES } from "../src/components/cell.js";
import { USER_PREVIEW_LINES } from "../src/components/messages.js";
import { REVIEW_DETAIL_LINES } from "../src/components/project-review.js";

// Compared with line breaks folded, so rewrapping a paragraph does not matter.
const README = readFileSync(new URL("../README.md", import.meta.url), "utf8").replace(/\s+/g, " ");

it("the numbers the README states are the ones the UI uses", () => {
	expect(README).toContain(
		`its first ${COLLAPSED_CODE_LINES} lines of code and the last ${COLLAPSED_OUTPUT_LINES} lines of output`,
	);
	expect(README).toContain(`the output up to ${EXPANDED_OUTPUT_LINES} lines`);
	expect(README).toContain(`the first ${ARCHIVE_PAGE_LINES} lines of the archived output`);
	expect(README).toContain(`/pc read <id> ${ARCHIVE_PAGE_LINES + 1}:${ARCHIVE_PAGE_LINES * 2}`);
	expect(README).toContain(`the conversation shows its first ${USER_PREVIEW_LINES} lines`);
	expect(README).toContain(`at most ${REVIEW_DETAIL_LINES} lines each (then \`+N more\`)`);
});
