import { expect, it } from "vitest";
import { describeNotice } from "./notices.js";

it("a compaction or extension failure whose message has its own full stop gets no second one", () => {
	expect(describeNotice({ type: "compaction_failed", reason: "command", message: "Connection error." })).toBe(
		"Compaction failed: Connection error. The conversation is unchanged; retry with /compact, or start a new session if the context is full.",
	);
	expect(
		describeNotice({ type: "extension_problem", path: "/x/ext.ts", phase: "session_start", message: "it threw." }),
	).toBe(
		"Extension /x/ext.ts failed in session_start: it threw. The session goes on without that step; fix or remove the extension.",
	);
	expect(describeNotice({ type: "compaction_failed", reason: "threshold", message: "timed out" })).toBe(
		"Compaction failed: timed out. The conversation is unchanged; retry with /compact, or start a new session if the context is full.",
	);
});
