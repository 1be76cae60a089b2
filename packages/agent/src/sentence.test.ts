import { expect, it } from "vitest";
import { endSentence } from "./sentence.js";

it("endSentence() adds one full stop, keeps a text's own, and never doubles it", () => {
	expect(endSentence("provider exploded")).toBe("provider exploded.");
	expect(endSentence("Connection error.")).toBe("Connection error.");
	expect(endSentence("Connection error. \n")).toBe("Connection error.");
	expect(endSentence("is it down?")).toBe("is it down?");
	expect(endSentence("it stopped!")).toBe("it stopped!");
	expect(endSentence("waited…")).toBe("waited…");
	expect(endSentence('the server said "busy."')).toBe('the server said "busy."');
	expect(endSentence("exit 1 (see the log)")).toBe("exit 1 (see the log).");
	expect(endSentence("version 1.2")).toBe("version 1.2.");
});
