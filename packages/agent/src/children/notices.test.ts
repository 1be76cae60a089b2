import { expect, it } from "vitest";
import { preview } from "./notices.js";

it("preview() counts and cuts by code points, never inside a surrogate pair", () => {
	expect(preview(`${"x".repeat(158)}😀😀😀`)).toBe(`${"x".repeat(158)}😀…`);
	expect(preview("😀".repeat(160))).toBe("😀".repeat(160));
	expect([...preview("😀".repeat(161))]).toHaveLength(160);
});
