import { expect, it } from "vitest";
import { noticeText, preview } from "./notices.js";

it("preview() counts and cuts by code points, never inside a surrogate pair", () => {
	expect(preview(`${"x".repeat(158)}😀😀😀`)).toBe(`${"x".repeat(158)}😀…`);
	expect(preview("😀".repeat(160))).toBe("😀".repeat(160));
	expect([...preview("😀".repeat(161))]).toHaveLength(160);
});

it("a failure notice ends the child's error with one full stop, whether or not the error has its own", () => {
	const facts = { kind: "failed" as const, id: "sub-1", name: "scout", sessionDir: "/s", lastText: "" };
	const said = (error: string) => noticeText({ ...facts, error });
	expect(said("Connection error.")).toBe(
		'[rlm notice: failed] Sub-agent "scout" (sub-1) failed: Connection error. Spawn it again (await rlm(...)) or do the work yourself. It wrote no text.',
	);
	expect(said("provider exploded")).toBe(
		'[rlm notice: failed] Sub-agent "scout" (sub-1) failed: provider exploded. Spawn it again (await rlm(...)) or do the work yourself. It wrote no text.',
	);
});
