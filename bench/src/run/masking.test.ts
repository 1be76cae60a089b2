import { describe, expect, it } from "vitest";
import type { Arm } from "../arms/index.js";
import { isMasked } from "./trajectories.js";

const arm = (every: number): Arm => ({
	name: "m",
	rule: "",
	mask: { keep: 5, every },
	open: async () => ({ view: async (o) => o.text }),
});
const maskedOf = (a: Arm, observed: number) =>
	Array.from({ length: observed }, (_, i) => i).filter((i) => isMasked(a, i, observed));

describe("masking boundaries", () => {
	it("sliding masking moves its boundary with every call", () => {
		expect(maskedOf(arm(1), 5)).toEqual([]);
		expect(maskedOf(arm(1), 6)).toEqual([0]);
		expect(maskedOf(arm(1), 7)).toEqual([0, 1]);
	});

	it("block masking moves its boundary only every N observations, so the prompt prefix holds between moves", () => {
		expect(maskedOf(arm(10), 14)).toEqual([]);
		expect(maskedOf(arm(10), 15)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
		expect(maskedOf(arm(10), 24)).toHaveLength(10);
		expect(maskedOf(arm(10), 25)).toHaveLength(20);
	});
});
