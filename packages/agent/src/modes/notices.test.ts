import { expect, it } from "vitest";
import { describeNotice } from "./notices.js";

it("a compaction or extension failure whose message has its own full stop gets no second one", () => {
	expect(describeNotice({ type: "compaction_failed", reason: "extension", message: "Connection error." })).toBe(
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

it("the end of a /compact the user typed is said once, by the command's answer, not again by its notice", () => {
	expect(describeNotice({ type: "compaction_failed", reason: "command", message: "timed out" })).toBeUndefined();
	const nothing = { status: "nothing", message: "Nothing to compact: the recent conversation is all kept verbatim." };
	expect(describeNotice({ type: "compaction_end", reason: "command", result: nothing } as never)).toBeUndefined();
	expect(describeNotice({ type: "compaction_end", reason: "threshold", result: nothing } as never)).toBe(
		nothing.message,
	);
	expect(describeNotice({ type: "compaction_start", reason: "command" })).toBe(
		"Compacting the older conversation (the kernel keeps its state)…",
	);
});
