import { describe, expect, it } from "vitest";
import { LIVE_OUTPUT_CHARS, LiveOutput } from "./live-output.js";

describe("LiveOutput", () => {
	it("carries all of a short output as it is", () => {
		const live = new LiveOutput();
		live.push("one\n");
		live.push("two\n");
		expect(live.text()).toBe("one\ntwo\n");
	});

	it("carries the latest characters of a long output, after the count of those before, whatever the chunks", () => {
		const line = (i: number) => `line ${String(i).padStart(7, "0")}\n`;
		const all = Array.from({ length: 200_000 }, (_, i) => line(i)).join("");
		for (const size of [1, 7, 4096, 1_000_000]) {
			const live = new LiveOutput();
			for (let at = 0; at < all.length; at += size) live.push(all.slice(at, at + size));
			const dropped = all.length - LIVE_OUTPUT_CHARS;
			expect(live.text()).toBe(
				`[… ${dropped.toLocaleString("en-US")} earlier characters]\n${all.slice(-LIVE_OUTPUT_CHARS)}`,
			);
		}
	});
});
