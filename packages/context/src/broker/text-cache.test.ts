import { describe, expect, it } from "vitest";
import { CACHED_TEXTS, TextCache } from "./text-cache.js";

describe("TextCache", () => {
	it("holds the texts of the last few observations, dropping the least recently stored", () => {
		const cache = new TextCache();
		for (let i = 1; i <= CACHED_TEXTS; i++) cache.set(`obs_${i}`, `text ${i}`);
		// Storing the first again makes it the newest: the second is dropped next.
		cache.set("obs_1", "text 1");
		cache.set("obs_9", "text 9");
		expect(cache.get("obs_2")).toBe(undefined);
		expect(cache.get("obs_1")).toBe("text 1");
		expect(cache.get("obs_9")).toBe("text 9");
		expect([1, 2, 3, 4, 9].filter((i) => cache.get(`obs_${i}`) !== undefined).length).toBe(CACHED_TEXTS);
	});
});
